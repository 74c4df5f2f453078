/**
 * @module providers/gemini/read-gemini-response
 * Reads a whole `GenerateContentResponse` into a normalized result (pure): answer text, thought
 * summaries as reasoning, function calls with generated ids `call_<n>` (Gemini's calls have no
 * ids; results are matched back by name), finish reason and usage. A prompt blocked before any
 * candidate (`promptFeedback.blockReason`) finishes as `content_filter`; no candidate without
 * one, or a function call without a name, is an error (the caller makes it a protocol error).
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

/**
 * A function call's name, which must be a non-empty string: anything else would reach the
 * client as a tool call it cannot dispatch (or not a string at all), and be billed.
 */
export function functionCallName(name: unknown): string {
  if (typeof name === "string" && name !== "") return name;
  throw new Error(`a functionCall whose name is ${JSON.stringify(name) ?? "absent"}`);
}

export function readGeminiResponse(response: GeminiResponse): GeminiAnswer {
  const candidate = response.candidates?.[0];
  const texts: string[] = [];
  const thoughts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.functionCall) {
      toolCalls.push({
        id: toolCallId(toolCalls.length),
        name: functionCallName(part.functionCall.name),
        arguments: JSON.stringify(part.functionCall.args ?? {}),
      });
    } else if (typeof part.text === "string") {
      (part.thought ? thoughts : texts).push(part.text);
    }
  }
  const blocked = !candidate && response.promptFeedback?.blockReason !== undefined;
  // No candidate and no block: an answer with nothing in it and no reason why is the vendor's
  // failure (a 502 charged nothing), as the same stream is, not an empty answer to bill.
  if (!candidate && !blocked) throw new Error("no candidate and no promptFeedback.blockReason");
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
