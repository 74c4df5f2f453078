/**
 * @module providers/anthropic/map-anthropic-stop-reason
 * Maps Anthropic's `stop_reason` to the normalized finish reason.
 * @see https://docs.anthropic.com/en/api/handling-stop-reasons
 */
import type { ChatFinishReason } from "../../spec/index.ts";

export function mapAnthropicStopReason(reason: string | null | undefined): ChatFinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      // `pause_turn` (a server tool paused the turn), null, and reasons added later.
      return "other";
  }
}
