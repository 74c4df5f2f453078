/**
 * @module providers/openai-compatible/openai-chunk-passthrough
 * An OpenAI-compatible upstream's chat stream handed to a client that speaks the same protocol:
 * each chunk's JSON text goes on as it came, with only the completion id and the model name
 * rewritten to the gateway's — a string replacement of the exact `"id":…` and `"model":…`
 * members the upstream writes, no parse and no serialization. A chunk that carries something the
 * gateway must read (a finish reason, usage, an error), or is written in a shape the replacement
 * cannot trust, is parsed and rebuilt instead; a usage-only chunk is kept back (the client's
 * usage chunk is the gateway's own, with the cost).
 */
import type {
  CallSignal,
  ChatChunkStreamPart,
  ChatFinishReason,
  ChunkRewrite,
  TokenUsage,
} from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { toUpstreamError } from "../kit/http-client.ts";
import {
  convertOpenAIUsage,
  mapOpenAIFinishReason,
  parseOpenAIStreamChunk,
} from "./map-openai-response.ts";

interface RawChunk {
  id?: unknown;
  model?: unknown;
  choices?: Array<{ index?: unknown; finish_reason?: unknown }> | null;
  usage?: unknown;
  error?: { message?: string; code?: string };
}

/** A member the gateway must read (JSON allows spaces around the colon): parse that chunk. */
const NEEDS_READING = /"finish_reason"\s*:(?!\s*null)|"usage"\s*:(?!\s*null)|"error"\s*:/;
const CLOSING_BRACE = 0x7d;

/** OpenAI's own finish reasons; anything else a vendor invents is mapped onto them. */
const OPENAI_REASONS: Record<ChatFinishReason, string> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  content_filter: "content_filter",
  error: "stop",
  other: "stop",
};

const member = (name: string, value: unknown) => `"${name}":${JSON.stringify(value)}`;

const ID_KEY = '"id"';
const MODEL_KEY = '"model"';

/** Whether `data` has a `key` member (the key, optional spaces, a colon) other than at `at`. */
function memberElsewhere(data: string, key: string, at: number): boolean {
  for (let found = data.indexOf(key); found >= 0; found = data.indexOf(key, found + 1)) {
    if (found === at) continue;
    let next = found + key.length;
    let code = data.charCodeAt(next);
    while (code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d)
      code = data.charCodeAt(++next);
    if (code === 0x3a) return true;
  }
  return false;
}

const USAGE_NULL = ',"usage":null';

/**
 * `data` with its first `idMember` replaced by `ourId`, its first `modelMember` by `ourModel`
 * and, when asked, its first `,"usage":null` removed: cut and joined in one pass, so a chunk is
 * not copied once per replacement. Undefined when the id or the model member is missing.
 */
export function renameMembers(
  data: string,
  idMember: string,
  ourId: string,
  modelMember: string,
  ourModel: string,
  dropUsageNull: boolean,
): string | undefined {
  const idAt = data.indexOf(idMember);
  if (idAt < 0) return undefined;
  const modelAt = data.indexOf(modelMember);
  if (modelAt < 0) return undefined;
  // A second `"id"` or `"model"` member (a tool call's id; a vendor writing one twice, whose
  // last one a client's parser keeps) is left to the slow path, which keeps one of each.
  if (memberElsewhere(data, ID_KEY, idAt) || memberElsewhere(data, MODEL_KEY, modelAt))
    return undefined;
  const usageAt = dropUsageNull ? data.indexOf(USAGE_NULL) : -1;
  // Members do not overlap (a member's quotes inside a JSON string would be escaped), so the
  // cuts only need taking in order; no array of cuts, this runs for every chunk.
  let idLeft = true;
  let modelLeft = true;
  let usageLeft = usageAt >= 0;
  let out = "";
  let from = 0;
  while (idLeft || modelLeft || usageLeft) {
    let start = Number.POSITIVE_INFINITY;
    let length = 0;
    let replacement = "";
    let cut: "id" | "model" | "usage" = "id";
    if (idLeft && idAt < start) {
      start = idAt;
      length = idMember.length;
      replacement = ourId;
      cut = "id";
    }
    if (modelLeft && modelAt < start) {
      start = modelAt;
      length = modelMember.length;
      replacement = ourModel;
      cut = "model";
    }
    if (usageLeft && usageAt < start) {
      start = usageAt;
      length = USAGE_NULL.length;
      replacement = "";
      cut = "usage";
    }
    if (start < from) return undefined; // overlapping members: leave the chunk to the slow path
    out += data.slice(from, start) + replacement;
    from = start + length;
    if (cut === "id") idLeft = false;
    else if (cut === "model") modelLeft = false;
    else usageLeft = false;
  }
  return out + data.slice(from);
}

export async function* passThroughChunks(
  /** The upstream's events, as each read of its body completed them (`decodeSseBatches`). */
  batches: AsyncIterable<Array<{ data: string }>>,
  rewrite: ChunkRewrite,
  choiceCount: number,
  /** The call's signal: a read that fails after it aborted is the client's leaving. */
  signal?: CallSignal,
): AsyncGenerator<ChatChunkStreamPart> {
  // Read failures become upstream errors here rather than in a wrapping generator: one async
  // layer less. The chunks of one read go on together: one asynchronous step per read, not per
  // chunk, down to the socket.
  try {
    const ourId = member("id", rewrite.id);
    const ourModel = member("model", rewrite.model);
    /** The upstream's `"id":…` and `"model":…` members, learnt from its first chunk. */
    let upstreamId: string | undefined;
    let upstreamModel: string | undefined;
    const finishReasons: ChatFinishReason[] = [];
    let usage: TokenUsage | undefined;
    let done = false;
    /** The chunks of the read at hand that are ready to go. */
    let ready: string[] = [];
    try {
      for await (const events of batches) {
        for (const event of events) {
          // Read on to the end of the body after [DONE]: a body dropped half-read costs the
          // connection.
          if (done || event.data === "[DONE]") {
            done = true;
            continue;
          }
          const data = event.data;
          if (
            upstreamId !== undefined &&
            upstreamModel !== undefined &&
            // A chunk cut short (an upstream that breaks mid-frame) does not end its object.
            data.charCodeAt(data.length - 1) === CLOSING_BRACE &&
            !NEEDS_READING.test(data)
          ) {
            const renamed = renameMembers(
              data,
              upstreamId,
              ourId,
              upstreamModel,
              ourModel,
              !rewrite.usageNulls,
            );
            if (renamed !== undefined) {
              ready.push(renamed);
              continue;
            }
          }
          const chunk = parseOpenAIStreamChunk<RawChunk>(data);
          if (upstreamId === undefined && typeof chunk.id === "string")
            upstreamId = member("id", chunk.id);
          if (upstreamModel === undefined && typeof chunk.model === "string")
            upstreamModel = member("model", chunk.model);
          usage = convertOpenAIUsage(chunk.usage) ?? usage;
          const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
          for (const [position, choice] of choices.entries()) {
            if (typeof choice !== "object" || choice === null) continue;
            if (choice.finish_reason === null || choice.finish_reason === undefined) continue;
            const reason = mapOpenAIFinishReason(choice.finish_reason);
            choice.finish_reason = OPENAI_REASONS[reason];
            // A finish of a choice the call did not ask for finishes nothing (and an index far
            // out would size an array).
            const index = choice.index ?? position;
            const asked = typeof index === "number" && Number.isInteger(index) && index >= 0;
            if (asked && index < Math.max(1, choiceCount)) finishReasons[index] = reason;
          }
          if (choices.length === 0) continue;
          chunk.id = rewrite.id;
          chunk.model = rewrite.model;
          if (rewrite.usageNulls) chunk.usage = null;
          else delete chunk.usage;
          ready.push(JSON.stringify(chunk));
        }
        if (ready.length > 0) {
          const json = ready;
          ready = [];
          yield { type: "chunks", json };
        }
      }
    } catch (error) {
      // What came before a malformed chunk in the same read still goes to the client first.
      if (ready.length > 0) yield { type: "chunks", json: ready };
      throw error;
    }
    const first = finishReasons[0];
    if (first === undefined)
      throw new UpstreamError({
        kind: "protocol",
        message: "Upstream stream ended before it finished.",
      });
    const several = finishReasons.length > 1 || choiceCount > 1;
    yield {
      type: "finish",
      finishReason: first,
      ...(several ? { finishReasons: Array.from(finishReasons, (reason) => reason ?? first) } : {}),
      usage,
    };
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
}
