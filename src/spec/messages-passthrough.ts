/**
 * @module spec/messages-passthrough
 * The native route of `/v1/messages`: an Anthropic-protocol upstream receives the client's body
 * (model name mapped) and its events come back unchanged, with the usage read on the way.
 */
import type { CallSignal } from "./call-signal.ts";
import type { TokenUsage } from "./usage.ts";

export interface PassthroughCall {
  /** The client's request body with `model` replaced by the upstream model name. */
  body: Record<string, unknown>;
  /** `anthropic-version`, `anthropic-beta` and other headers to forward unchanged. */
  headers: Record<string, string>;
  abortSignal?: CallSignal;
}

export interface PassthroughEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * An event the adapter passed on without reading it (a content block's start, delta or stop,
 * a ping): its data exactly as the upstream sent it.
 */
export interface PassthroughTextEvent {
  event: string;
  data?: undefined;
  json: string;
}

export interface PassthroughResult {
  body: Record<string, unknown>;
  usage: TokenUsage | undefined;
  upstreamRequestId?: string;
}

export interface PassthroughStream<Event = PassthroughEvent> {
  events: AsyncIterable<Event>;
  /** Usage from `message_start` and `message_delta` seen so far. */
  usage(): TokenUsage | undefined;
  upstreamRequestId?: string;
}

export interface MessagesPassthroughModel {
  readonly specificationVersion: "switchyard-messages-passthrough-1";
  create(call: PassthroughCall): Promise<PassthroughResult>;
  /**
   * The events the gateway must read (usage, the stop, errors) parsed; the others as text. The
   * events come as the arrays each read of the upstream's body completed (in order, never
   * empty), so the relay pays one asynchronous step per read, not per event.
   */
  stream(
    call: PassthroughCall,
  ): Promise<PassthroughStream<Array<PassthroughEvent | PassthroughTextEvent>>>;
  countTokens(call: PassthroughCall): Promise<{ input_tokens: number }>;
}
