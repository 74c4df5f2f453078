/**
 * @module providers/openai-compatible/map-openai-response
 * Maps OpenAI finish reasons, usage objects and error envelopes to the normalized forms, and
 * reads one chunk of an OpenAI chat stream.
 * @see https://platform.openai.com/docs/api-reference/chat/object
 */
import { type ChatFinishReason, type TokenUsage, UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";

export function mapOpenAIFinishReason(reason: unknown): ChatFinishReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** DeepSeek reports cache hits this way. */
  prompt_cache_hit_tokens?: number;
}

export function convertOpenAIUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as OpenAIUsage;
  if (typeof usage.prompt_tokens !== "number" && typeof usage.completion_tokens !== "number")
    return undefined;
  return {
    input: {
      total: usage.prompt_tokens ?? 0,
      cacheRead: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
      cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output: {
      total: usage.completion_tokens ?? 0,
      reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    },
    source: "upstream",
    raw,
  };
}

export function readOpenAIErrorFields(body: unknown): { message?: string; code?: string } {
  const error = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } }).error;
  if (typeof error !== "object" || error === null) return {};
  return {
    message: typeof error.message === "string" ? error.message : undefined,
    code:
      typeof error.code === "string"
        ? error.code
        : typeof error.type === "string"
          ? error.type
          : undefined,
  };
}

/** Reads OpenAI's error envelope from a non-2xx answer. */
export function readOpenAIError(response: UpstreamResponse): Promise<UpstreamError> {
  return readUpstreamError(response, readOpenAIErrorFields);
}

/**
 * One chunk of an OpenAI chat stream: its JSON object, or an `UpstreamError` for text that is
 * not a JSON object (`protocol`) and for the error object a vendor sends mid-stream (`http`).
 */
export function parseOpenAIStreamChunk<T extends { error?: { message?: string; code?: string } }>(
  data: string,
): T {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch (error) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream sent a malformed stream chunk.",
      cause: error,
    });
  }
  if (typeof chunk !== "object" || chunk === null)
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream sent a malformed stream chunk.",
    });
  const { error } = chunk as T;
  if (error)
    throw new UpstreamError({
      kind: "http",
      message: error.message ?? "Upstream stream error.",
      vendorCode: error.code,
      body: chunk,
    });
  return chunk as T;
}
