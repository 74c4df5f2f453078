/**
 * @module providers/anthropic/anthropic-passthrough
 * The native `/v1/messages` route: the client's Messages body goes to an Anthropic-protocol
 * upstream almost untouched (model mapped, `anthropic-version` / `anthropic-beta` forwarded),
 * and the answer or event stream comes back as is while its usage is read for billing. Only the
 * events that carry usage, the stop or an error are parsed; content blocks and pings go on as
 * the upstream's text.
 * @see https://docs.anthropic.com/en/api/messages-streaming
 */
import type {
  CallSignal,
  MessagesPassthroughModel,
  PassthroughCall,
  PassthroughEvent,
  PassthroughStream,
  PassthroughTextEvent,
} from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { type HttpClient, headerValue, toUpstreamError } from "../kit/http-client.ts";
import { decodeSseBatches, parseEventObject, type SseEvent } from "../kit/sse-decoder.ts";
import { badResponse, postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import type { AnthropicUsage } from "./anthropic-api.ts";
import { ANTHROPIC_VERSION } from "./anthropic-chat-model.ts";
import { ANTHROPIC_REQUEST_ID_HEADER, readAnthropicError } from "./anthropic-error.ts";
import {
  convertAnthropicUsage,
  mergeAnthropicUsage,
  startUsage,
} from "./convert-anthropic-usage.ts";

/** Events passed on as text: nothing in them is read for billing or for the stream's end. */
const UNREAD_EVENTS = new Set([
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "ping",
]);

/** Text that opens and closes an object; anything else is parsed (and refused when it is not JSON). */
const isObjectText = (text: string) =>
  text.charCodeAt(0) === 0x7b /* { */ && text.charCodeAt(text.length - 1) === 0x7d; /* } */

export interface AnthropicPassthroughConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
}

export class AnthropicPassthrough implements MessagesPassthroughModel {
  readonly specificationVersion = "switchyard-messages-passthrough-1" as const;
  readonly #config: AnthropicPassthroughConfig;

  constructor(config: AnthropicPassthroughConfig) {
    this.#config = config;
  }

  async #post(path: string, call: PassthroughCall, stream: boolean) {
    return postUpstream(this.#config.http, `${this.#config.baseUrl}${path}`, {
      headers: {
        "anthropic-version": ANTHROPIC_VERSION,
        ...call.headers,
        "x-api-key": this.#config.apiKey,
        "content-type": "application/json",
        ...(stream ? { accept: "text/event-stream" } : {}),
      },
      body: JSON.stringify(call.body),
      signal: call.abortSignal,
      readError: readAnthropicError,
    });
  }

  async create(call: PassthroughCall) {
    const response = await this.#post(
      "/v1/messages",
      { ...call, body: { ...call.body, stream: false } },
      false,
    );
    return readJsonObject(response, call.abortSignal, (body) => ({
      body,
      usage: convertAnthropicUsage(body.usage),
      upstreamRequestId: headerValue(response.headers, ANTHROPIC_REQUEST_ID_HEADER),
    }));
  }

  async stream(
    call: PassthroughCall,
  ): Promise<PassthroughStream<Array<PassthroughEvent | PassthroughTextEvent>>> {
    const response = await this.#post(
      "/v1/messages",
      { ...call, body: { ...call.body, stream: true } },
      true,
    );
    let usage: AnthropicUsage | undefined;
    const signal = call.abortSignal;
    /** Reads one event: usage and the stop noted; most events go on as text, unparsed. */
    const read = (frame: SseEvent): Relayed => {
      if (frame.event !== undefined && UNREAD_EVENTS.has(frame.event) && isObjectText(frame.data))
        return { event: frame.event, json: frame.data };
      const data = parseEventObject(frame.data);
      const event = frame.event ?? String(data.type ?? "message");
      if (event === "message_start")
        usage = mergeAnthropicUsage(
          usage,
          startUsage((data.message as { usage?: AnthropicUsage } | undefined)?.usage),
        );
      else if (event === "message_delta")
        usage = mergeAnthropicUsage(usage, data.usage as AnthropicUsage | undefined);
      return { event, data };
    };
    return {
      events: relayedEvents(response.body, read, signal),
      usage: () => convertAnthropicUsage(usage),
      upstreamRequestId: headerValue(response.headers, ANTHROPIC_REQUEST_ID_HEADER),
    };
  }

  async countTokens(call: PassthroughCall) {
    const { max_tokens: _max, stream: _stream, ...body } = call.body;
    const response = await this.#post("/v1/messages/count_tokens", { ...call, body }, false);
    return readJsonObject(response, call.abortSignal, (answer) => {
      if (typeof answer.input_tokens !== "number") throw badResponse("no input_tokens");
      return { input_tokens: answer.input_tokens };
    });
  }
}

/** An event relayed: parsed, or passed on as its text. */
type Relayed = PassthroughEvent | PassthroughTextEvent;

/**
 * The upstream's events in the batches they were read in, each read by `read`; nothing after
 * `message_stop`. Made once, not per call: V8 keeps a generator function made per call, and all
 * it closes over, until its next full collection (docs/performance.md).
 */
async function* relayedEvents(
  body: Parameters<typeof decodeSseBatches>[0],
  read: (frame: SseEvent) => Relayed,
  signal: CallSignal | undefined,
): AsyncGenerator<Relayed[]> {
  let stopped = false;
  /** The events of the read at hand, ready to go. */
  let ready: Relayed[] = [];
  try {
    for await (const frames of decodeSseBatches(body)) {
      for (const frame of frames) {
        // Read on to the end of the body after message_stop (a body dropped half-read costs
        // the connection), but pass nothing on: the request is settled at the stop, so what
        // a vendor sends after it would reach the client unbilled.
        if (stopped) continue;
        const event = read(frame);
        ready.push(event);
        if (event.event === "message_stop") stopped = true;
        if (event.event === "error") {
          yield ready;
          return;
        }
      }
      if (ready.length === 0) continue;
      const batch = ready;
      ready = [];
      yield batch;
    }
  } catch (error) {
    // What a read held before a malformed event still goes to the client first.
    if (ready.length > 0) yield ready;
    throw toUpstreamError(error, signal);
  }
  if (!stopped)
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream stream ended before message_stop.",
    });
}
