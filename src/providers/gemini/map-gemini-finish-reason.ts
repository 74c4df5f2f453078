/**
 * @module providers/gemini/map-gemini-finish-reason
 * Maps a Gemini `finishReason` to the normalized one. Gemini ends a function call with `STOP`,
 * so the caller says whether the answer carried function calls.
 * @see https://ai.google.dev/api/generate-content#FinishReason
 */
import type { ChatFinishReason } from "../../spec/index.ts";

export function mapGeminiFinishReason(
  reason: string | undefined,
  hasToolCalls: boolean,
): ChatFinishReason {
  switch (reason) {
    case "STOP":
      return hasToolCalls ? "tool_calls" : "stop";
    case "MAX_TOKENS":
      return "length";
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter";
    case "MALFORMED_FUNCTION_CALL":
      return "error";
    default:
      return "other";
  }
}
