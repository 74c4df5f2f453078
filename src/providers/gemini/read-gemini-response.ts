/**
 * @module providers/gemini/read-gemini-response
 * Reads a whole `GenerateContentResponse` into a normalized result (pure): answer text, thought
 * summaries as reasoning, function calls with generated ids `call_<n>` (Gemini's calls have no
 * ids; results are matched back by name), finish reason and usage. A prompt blocked before any
 * candidate (`promptFeedback.blockReason`) finishes as `content_filter`.
 * @see https://ai.google.dev/api/generate-content#generatecontentresponse
 */
import type { ChatFinishReason, ChatToolCall, TokenUsage } from "../../spec/index.ts";
import { convertGeminiUsage } from "./convert-gemini-usage.ts";
import type { GeminiResponse } from "./gemini-api-types.ts";
import { mapGeminiFinishReason } from "./map-gemini-finish-reason.ts";

export interface GeminiAnswer {
  id: string | undefined;
  text: string | null;
  reasoning: string | undefined;
  toolCalls: ChatToolCall[];
  finishReason: ChatFinishReason;
  usage: TokenUsage | undefined;
}

/** The id of the n-th function call of one response. */
export const toolCallId = (index: number): string => `call_${index}`;

export function readGeminiResponse(response: GeminiResponse): GeminiAnswer {
  const candidate = response.candidates?.[0];
  const texts: string[] = [];
  const thoughts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.functionCall) {
      toolCalls.push({
        id: toolCallId(toolCalls.length),
        name: part.functionCall.name ?? "",
        arguments: JSON.stringify(part.functionCall.args ?? {}),
      });
    } else if (typeof part.text === "string") {
      (part.thought ? thoughts : texts).push(part.text);
    }
  }
  const blocked = !candidate && response.promptFeedback?.blockReason !== undefined;
  return {
    id: response.responseId,
    text: texts.length ? texts.join("") : null,
    reasoning: thoughts.length ? thoughts.join("") : undefined,
    toolCalls,
    finishReason: blocked
      ? "content_filter"
      : mapGeminiFinishReason(candidate?.finishReason, toolCalls.length > 0),
    usage: convertGeminiUsage(response.usageMetadata),
  };
}
