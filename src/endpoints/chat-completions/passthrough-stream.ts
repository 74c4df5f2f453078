/**
 * @module endpoints/chat-completions/passthrough-stream
 * A chat stream whose upstream speaks OpenAI chat too: the upstream's chunks reach the client as
 * the adapter passed them (renamed, not rebuilt), and only the end is the gateway's own — the
 * usage chunk with the cost, when asked for, and `[DONE]`. What was delivered is read from the
 * chunks only when it is needed (a checkpoint, an abort, a break, an upstream that reports no
 * usage), so a stream that ends normally is never parsed twice.
 */
import { atLeastDelivered, completedUsage, DeliveredText } from "../../billing/index.ts";
import {
  framesTogether,
  type OperationContext,
  type OperationResult,
  type StreamFrame,
} from "../../core/operation.ts";
import type { CallWarning, ChatChunkStreamPart, TokenUsage } from "../../spec/index.ts";
import { toOpenAIUsage } from "./build-chat-response.ts";

/** Members of a delta that label what was delivered (or carry media) rather than its text. */
const LABELS = new Set(["role", "type", "id", "index", "signature", "annotations", "data"]);
/** Members whose text is reasoning, wherever a vendor puts them. */
const REASONING = new Set(["reasoning_content", "reasoning", "reasoning_details", "thinking"]);
/** Deeper than any delta a vendor writes; a deeper one is not walked further. */
const MAX_DEPTH = 8;

/** Adds every string under `value` (a delta or a part of one) as delivered text. */
function addStrings(
  value: unknown,
  delivered: DeliveredText,
  reasoning: boolean,
  depth: number,
): void {
  if (typeof value === "string") {
    delivered.add(value, reasoning);
    return;
  }
  if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (const item of value) addStrings(item, delivered, reasoning, depth + 1);
    return;
  }
  for (const key in value) {
    if (LABELS.has(key)) continue;
    const inner = (value as Record<string, unknown>)[key];
    addStrings(inner, delivered, reasoning || REASONING.has(key), depth + 1);
  }
}

/**
 * Adds the text a passed-through chunk delivered, whatever shape the vendor wrote it in: content
 * (a string, or a list of parts as Mistral's Magistral writes it), a refusal, reasoning
 * (`reasoning_content`, `reasoning`, `reasoning_details`, `thinking` parts), tool and legacy
 * function calls (names and arguments), an audio transcript. A chunk of an unexpected shape
 * (a `tool_calls` object, a `null` choice) adds what it carries and never throws: a count that
 * fails would make a delivered stream free.
 */
export function addDelivered(json: string, delivered: DeliveredText): void {
  let chunk: unknown;
  try {
    chunk = JSON.parse(json);
  } catch {
    return;
  }
  const choices = (chunk as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return;
  for (const choice of choices) {
    if (typeof choice === "object" && choice !== null)
      addStrings((choice as { delta?: unknown }).delta, delivered, false, 0);
  }
}

/** The chunk that ends a chat stream whose upstream broke mid-way (OpenAI's error object). */
export function upstreamErrorFrame(error: unknown): StreamFrame {
  const message = error instanceof Error ? error.message : "Upstream stream failed.";
  return {
    data: { error: { message, type: "upstream_error", code: "upstream_error" } },
    interrupts: true,
  };
}

/** What a passed-through stream keeps while it runs: its usage, whether it broke, the chunks not yet counted. */
interface PassThroughRun {
  usage: TokenUsage | undefined;
  interrupted: boolean;
  /** Chunks sent and not yet read for the delivered count. */
  unread: string[];
  delivered: DeliveredText;
}

type PassThroughInput = Parameters<typeof passedThroughStream>[0];

/** Counts the chunks not yet read, then asks for the gateway's own count of the delivered output. */
function ownCountOf(input: PassThroughInput, run: PassThroughRun): Promise<TokenUsage> {
  for (const json of run.unread) addDelivered(json, run.delivered);
  run.unread = [];
  return input.ownCount(run.delivered);
}

/**
 * The frames of a passed-through stream. A module-level generator that takes its state as
 * arguments, not one made per request: V8 gives every generator function it creates a map of its
 * own, in the old generation, that holds the function and so everything it closes over until the
 * next full collection, which turned every finished stream's state into old-generation garbage
 * (docs/performance.md, "What a stream keeps past the young generation").
 */
async function* passedThroughFrames(
  input: PassThroughInput,
  run: PassThroughRun,
): AsyncGenerator<StreamFrame> {
  const { context } = input;
  try {
    for await (const part of input.chunks) {
      if (part.type === "finish") {
        run.usage = part.usage;
        continue;
      }
      const batch: StreamFrame[] = [];
      for (const json of part.json) {
        run.unread.push(json);
        batch.push({ data: undefined, json });
      }
      yield framesTogether(batch);
    }
  } catch (error) {
    run.interrupted = !context.signal.aborted;
    yield upstreamErrorFrame(error);
    return;
  }
  const usage = await completedUsage(run.usage, () => ownCountOf(input, run));
  run.usage = usage;
  const { costMicros } = await context.settle({ tokens: usage });
  if (input.includeUsage) {
    yield {
      data: {
        id: input.id,
        object: "chat.completion.chunk",
        created: input.created,
        model: context.model.id,
        choices: [],
        usage: { ...toOpenAIUsage(usage), cost_micros: costMicros },
      },
    };
  }
  yield { data: "[DONE]" };
}

export function passedThroughStream(input: {
  chunks: AsyncIterable<ChatChunkStreamPart>;
  context: OperationContext;
  id: string;
  created: number;
  includeUsage: boolean;
  warnings: CallWarning[];
  /** The gateway's own count for a delivered output (the prompt is counted there too). */
  ownCount(delivered: DeliveredText): Promise<TokenUsage>;
}): OperationResult {
  const run: PassThroughRun = {
    usage: undefined,
    interrupted: false,
    unread: [],
    delivered: new DeliveredText(),
  };
  return {
    kind: "stream",
    frames: passedThroughFrames(input, run),
    warnings: input.warnings,
    usage: async () => {
      const own = await ownCountOf(input, run);
      if (run.interrupted && own.output.total === 0 && !run.usage) return undefined;
      return { tokens: atLeastDelivered(run.usage, own) };
    },
    interrupted: () => run.interrupted,
  };
}
