/**
 * @module providers/gemini/gemini-stream-parts
 * Turns the SSE events of `streamGenerateContent?alt=sse` (each a whole `GenerateContentResponse`
 * chunk) into normalized stream parts: `stream-start` once the first chunk arrives (with its
 * `responseId`), `reasoning-delta` for thought parts, `text-delta`, and for each function call a
 * `tool-call-start` (id `call_<n>`) plus one `tool-call-delta` holding the whole JSON arguments.
 * `finish` carries the usage of the last `usageMetadata` seen. A stream that ends without a
 * `finishReason`, or sends a chunk that is not JSON, fails with an `UpstreamError` of kind
 * `protocol`; an `error` chunk fails with kind `http`.
 * @see https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
 */
import type { CallWarning, ChatStreamPart, TokenUsage } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import type { SseEvent } from "../kit/sse-decoder.ts";
import { convertGeminiUsage } from "./convert-gemini-usage.ts";
import type { GeminiResponse } from "./gemini-api-types.ts";
import { isRetryableGeminiStatus } from "./gemini-error.ts";
import { mapGeminiFinishReason } from "./map-gemini-finish-reason.ts";
import { functionCallName, toolCallId } from "./read-gemini-response.ts";

function parseChunk(data: string): GeminiResponse {
  try {
    return JSON.parse(data) as GeminiResponse;
  } catch (error) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream sent a malformed stream chunk.",
      cause: error,
    });
  }
}

function streamError(chunk: GeminiResponse): UpstreamError {
  const error = chunk.error ?? {};
  return new UpstreamError({
    kind: "http",
    message: error.message ?? "Upstream stream error.",
    status: error.code,
    vendorCode: error.status,
    body: chunk,
    retryable: isRetryableGeminiStatus(error.status) ?? false,
  });
}

export async function* toChatStreamParts(
  /** The upstream's events, as each read completed them (`decodeSseBatches`). */
  batches: AsyncIterable<SseEvent[]>,
  init: { warnings: CallWarning[]; upstreamRequestId?: string },
): AsyncGenerator<ChatStreamPart> {
  let started = false;
  let finishReason: string | undefined;
  let usage: TokenUsage | undefined;
  let toolCount = 0;
  const start = (id: string | undefined): ChatStreamPart => {
    started = true;
    const requestId = init.upstreamRequestId ?? id;
    return {
      type: "stream-start",
      warnings: init.warnings,
      ...(id ? { id } : {}),
      ...(requestId ? { upstreamRequestId: requestId } : {}),
    };
  };

  for await (const events of batches)
    for (const event of events) {
      if (event.data.trim() === "") continue;
      const chunk = parseChunk(event.data);
      if (chunk.error) throw streamError(chunk);
      if (!started) yield start(chunk.responseId);
      usage = convertGeminiUsage(chunk.usageMetadata) ?? usage;
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (part.functionCall) {
          const index = toolCount++;
          let name: string;
          try {
            name = functionCallName(part.functionCall.name);
          } catch (error) {
            throw new UpstreamError({
              kind: "protocol",
              message: `Upstream sent ${(error as Error).message}.`,
              cause: error,
            });
          }
          yield { type: "tool-call-start", index, id: toolCallId(index), name };
          const argumentsDelta = JSON.stringify(part.functionCall.args ?? {});
          yield { type: "tool-call-delta", index, argumentsDelta };
        } else if (typeof part.text === "string" && part.text !== "") {
          yield part.thought
            ? { type: "reasoning-delta", delta: part.text }
            : { type: "text-delta", delta: part.text };
        }
      }
      if (candidate?.finishReason) finishReason = candidate.finishReason;
      // A prompt blocked before any candidate: report it as a content filter finish.
      else if (!candidate && chunk.promptFeedback?.blockReason) finishReason = "PROHIBITED_CONTENT";
    }
  if (!started) yield start(undefined);
  if (finishReason === undefined) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream stream ended before it finished.",
    });
  }
  yield {
    type: "finish",
    finishReason: mapGeminiFinishReason(finishReason, toolCount > 0),
    usage,
  };
}
