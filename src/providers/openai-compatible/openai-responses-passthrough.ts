/**
 * @module providers/openai-compatible/openai-responses-passthrough
 * OpenAI's own `POST /v1/responses` for the native route of the gateway's `/v1/responses`: the
 * body goes upstream as the endpoint prepared it, the Response or the named event stream comes
 * back unchanged, and the usage (`input_tokens` with `cached_tokens`, `output_tokens` with
 * `reasoning_tokens`) is read for billing from the Response or the terminal event.
 * @see https://platform.openai.com/docs/api-reference/responses
 */
import type {
  CallSignal,
  PassthroughCall,
  PassthroughEvent,
  PassthroughStream,
  ResponsesPassthroughModel,
  TokenUsage,
} from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { type HttpClient, headerValue, toUpstreamError } from "../kit/http-client.ts";
import { decodeSseBatches, parseEventObject } from "../kit/sse-decoder.ts";
import { reportedTokenUsage } from "../kit/token-counts.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { readOpenAIError } from "./map-openai-response.ts";

export interface OpenAIResponsesConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

interface ResponsesUsage {
  input_tokens?: unknown;
  input_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
  output_tokens?: unknown;
  output_tokens_details?: { reasoning_tokens?: unknown } | null;
}

/**
 * The Responses API's usage object in normalized form (input includes cached tokens), or
 * undefined when it is not a whole report (the gateway then counts both sides itself).
 */
export function convertResponsesUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as ResponsesUsage;
  return reportedTokenUsage(
    {
      inputTotal: usage.input_tokens,
      outputTotal: usage.output_tokens,
      cacheRead: usage.input_tokens_details?.cached_tokens,
      cacheWrite: usage.input_tokens_details?.cache_write_tokens,
      reasoning: usage.output_tokens_details?.reasoning_tokens,
    },
    raw,
  );
}

export class OpenAIResponsesPassthrough implements ResponsesPassthroughModel {
  readonly specificationVersion = "switchyard-responses-passthrough-1" as const;
  readonly #config: OpenAIResponsesConfig;

  constructor(config: OpenAIResponsesConfig) {
    this.#config = config;
  }

  #post(call: PassthroughCall, stream: boolean) {
    return postUpstream(this.#config.http, `${this.#config.baseUrl}/responses`, {
      headers: {
        ...call.headers,
        ...(this.#config.apiKey ? { authorization: `Bearer ${this.#config.apiKey}` } : {}),
        "content-type": "application/json",
        ...(stream ? { accept: "text/event-stream" } : {}),
      },
      body: JSON.stringify({ ...call.body, stream }),
      signal: call.abortSignal,
      readError: readOpenAIError,
    });
  }

  async create(call: PassthroughCall) {
    const response = await this.#post(call, false);
    return readJsonObject(response, call.abortSignal, (body) => {
      // A Response that failed delivered nothing: an upstream failure, charged nothing.
      if (body.status === "failed") {
        const error = (body.error ?? {}) as { message?: unknown; code?: unknown };
        throw new UpstreamError({
          kind: "http",
          message:
            typeof error.message === "string" ? error.message : "The upstream's response failed.",
          ...(typeof error.code === "string" ? { vendorCode: error.code } : {}),
          body,
        });
      }
      return {
        body,
        usage: convertResponsesUsage(body.usage),
        upstreamRequestId: headerValue(response.headers, "x-request-id"),
      };
    });
  }

  async stream(call: PassthroughCall): Promise<PassthroughStream<PassthroughEvent[]>> {
    const response = await this.#post(call, true);
    const run: { usage: TokenUsage | undefined } = { usage: undefined };
    return {
      events: responsesEvents(response.body, call.abortSignal, run),
      usage: () => run.usage,
      upstreamRequestId: headerValue(response.headers, "x-request-id"),
    };
  }
}

/**
 * The upstream's events in the batches they were read in, up to the terminal event, whose usage
 * goes to `run`. Made once, not per call: V8 keeps a generator function made per call, and all
 * it closes over, until its next full collection (docs/performance.md).
 */
async function* responsesEvents(
  body: Parameters<typeof decodeSseBatches>[0],
  signal: CallSignal | undefined,
  run: { usage: TokenUsage | undefined },
): AsyncGenerator<PassthroughEvent[]> {
  let ended = false;
  /** The events of the read at hand, ready to go. */
  let ready: PassthroughEvent[] = [];
  try {
    reading: for await (const frames of decodeSseBatches(body)) {
      for (const frame of frames) {
        if (frame.data === "[DONE]") break reading;
        const data = parseEventObject(frame.data);
        const event = typeof data.type === "string" ? data.type : (frame.event ?? "message");
        if (TERMINAL.has(event)) {
          ended = true;
          run.usage = convertResponsesUsage(
            (data.response as { usage?: unknown } | undefined)?.usage,
          );
        }
        ready.push({ event, data });
        if (ended) break reading;
      }
      const batch = ready;
      ready = [];
      yield batch;
    }
  } catch (error) {
    // What a read held before a malformed event still goes to the client first.
    if (ready.length > 0) yield ready;
    throw toUpstreamError(error, signal);
  }
  if (ready.length > 0) yield ready;
  if (!ended)
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream stream ended before its terminal event.",
    });
}
