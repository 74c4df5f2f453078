/**
 * @module endpoints/messages/build-messages-response
 * Builds the Anthropic `Message` body from a normalized chat result: a `thinking` block (with a
 * gateway signature) when the model reasoned, then the text, then one `tool_use` block per call.
 * Usage follows Anthropic's split: `input_tokens` excludes the cached reads and cache writes.
 * Shared with the stream: {@link signThinking}, {@link toolUseId}, {@link toAnthropicUsage}.
 * @see https://docs.anthropic.com/en/api/messages
 */
import { createHash } from "node:crypto";
import type { ChatResult, TokenUsage } from "../../spec/index.ts";
import { type AnthropicStopReason, stopReasonFor } from "./map-to-anthropic-stop-reason.ts";
import type { AnthropicMessage } from "./schema.ts";

const SIGNATURE_PREFIX = "switchyard-thinking-v1\n";

/**
 * A deterministic opaque signature for a thinking block the gateway produced, so clients that
 * require one can echo the block back. It proves nothing to Anthropic: translated routes only.
 */
export function signThinking(text: string): string {
  return createHash("sha256").update(SIGNATURE_PREFIX).update(text).digest("base64");
}

/** The upstream call id as is; a stable `toolu_` id when the upstream sent none. */
export function toolUseId(callId: string, messageId: string, index: number): string {
  if (callId) return callId;
  const digest = createHash("sha256").update(`${messageId}:${index}`).digest("base64url");
  return `toolu_${digest.slice(0, 24)}`;
}

export function toAnthropicUsage(usage: TokenUsage): AnthropicMessage["usage"] {
  const { total, cacheRead, cacheWrite } = usage.input;
  return {
    input_tokens: Math.max(0, total - cacheRead - cacheWrite),
    output_tokens: usage.output.total,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** Tool arguments as an object; `{}` when they are empty, not JSON or not an object. */
function parseToolInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Unparseable arguments become {} below.
  }
  return {};
}

/**
 * The stop sequence the text ends with, when the model stopped normally. OpenAI-style upstreams
 * strip the sequence (so `stop_reason` stays `end_turn`); some leave it in, and then it shows.
 */
function matchedStopSequence(
  result: ChatResult,
  stopSequences: string[] | undefined,
): string | undefined {
  if (result.finishReason !== "stop" || !result.text || result.toolCalls.length) return undefined;
  const text = result.text;
  return stopSequences?.find((sequence) => sequence !== "" && text.endsWith(sequence));
}

export function buildMessagesResponse(input: {
  id: string;
  model: string;
  result: ChatResult;
  usage: TokenUsage;
  stopSequences?: string[];
}): AnthropicMessage {
  const { result } = input;
  const content: Array<Record<string, unknown>> = [];
  if (result.reasoning) {
    content.push({
      type: "thinking",
      thinking: result.reasoning,
      signature: signThinking(result.reasoning),
    });
  }
  const stopSequence = matchedStopSequence(result, input.stopSequences);
  const text = stopSequence ? result.text?.slice(0, -stopSequence.length) : result.text;
  if (text) content.push({ type: "text", text });
  result.toolCalls.forEach((call, index) => {
    content.push({
      type: "tool_use",
      id: toolUseId(call.id, input.id, index),
      name: call.name,
      input: parseToolInput(call.arguments),
    });
  });
  const stopReason: AnthropicStopReason = stopSequence
    ? "stop_sequence"
    : stopReasonFor(result.finishReason, result.toolCalls.length > 0);
  return {
    id: input.id,
    type: "message",
    role: "assistant",
    model: input.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence ?? null,
    usage: toAnthropicUsage(input.usage),
  };
}
