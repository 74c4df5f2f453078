/**
 * @module endpoints/messages/map-to-anthropic-stop-reason
 * Maps the normalized finish reason to Anthropic's `stop_reason` (the reverse of the Anthropic
 * adapter's mapping). `error` and `other` have no Anthropic counterpart and become `end_turn`.
 * Upstreams that report a plain `stop` while returning tool calls (some OpenAI-compatible servers
 * and Gemini do) are answered with `tool_use`, which is what Anthropic clients loop on.
 * @see https://docs.anthropic.com/en/api/handling-stop-reasons
 */
import type { ChatFinishReason } from "../../spec/index.ts";
import type { AnthropicMessage } from "./schema.ts";

export type AnthropicStopReason = NonNullable<AnthropicMessage["stop_reason"]>;

export function mapToAnthropicStopReason(reason: ChatFinishReason): AnthropicStopReason {
  switch (reason) {
    case "stop":
      return "end_turn";
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** {@link mapToAnthropicStopReason}, with `stop`/`other` turned into `tool_use` when tools were called. */
export function stopReasonFor(
  reason: ChatFinishReason,
  hasToolCalls: boolean,
): AnthropicStopReason {
  if (hasToolCalls && (reason === "stop" || reason === "other")) return "tool_use";
  return mapToAnthropicStopReason(reason);
}
