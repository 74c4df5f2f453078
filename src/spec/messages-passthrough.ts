/**
 * @module spec/messages-passthrough
 * The native route of `/v1/messages`: an Anthropic-protocol upstream receives the client's body
 * (model name mapped) and its events come back unchanged, with the usage read on the way.
 */
import type { TokenUsage } from "./usage.ts";

export interface PassthroughCall {
  /** The client's request body with `model` replaced by the upstream model name. */
  body: Record<string, unknown>;
  /** `anthropic-version`, `anthropic-beta` and other headers to forward unchanged. */
  headers: Record<string, string>;
  abortSignal?: AbortSignal;
}

export interface PassthroughEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface PassthroughResult {
  body: Record<string, unknown>;
  usage: TokenUsage | undefined;
  upstreamRequestId?: string;
}

export interface PassthroughStream {
  events: AsyncIterable<PassthroughEvent>;
  /** Usage from `message_start` and `message_delta` seen so far. */
  usage(): TokenUsage | undefined;
  upstreamRequestId?: string;
}

export interface MessagesPassthroughModel {
  readonly specificationVersion: "switchyard-messages-passthrough-1";
  create(call: PassthroughCall): Promise<PassthroughResult>;
  stream(call: PassthroughCall): Promise<PassthroughStream>;
  countTokens(call: PassthroughCall): Promise<{ input_tokens: number }>;
}
