/**
 * @module providers/openai-compatible/map-openai-response
 * Maps OpenAI finish reasons, usage objects and error envelopes to the normalized forms, and
 * reads one chunk of an OpenAI chat stream.
 * @see https://platform.openai.com/docs/api-reference/chat/object
 */
import { type ChatFinishReason, type TokenUsage, UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";
import { reportedTokenUsage, tokenCount } from "../kit/token-counts.ts";

/**
 * A message's (or a delta's) `content`: a string, or a list of parts as Mistral's Magistral
 * models write it — `{"type":"text","text"}` and `{"type":"thinking","thinking":[{"type":"text",
 * "text"}]}` — read as the answer's text and its reasoning. Other parts (references, images)
 * carry no text of the answer.
 * @see https://docs.mistral.ai/capabilities/reasoning/
 */
export function readOpenAIContent(content: unknown): { text: string | null; reasoning: string } {
  if (typeof content === "string") return { text: content, reasoning: "" };
  if (!Array.isArray(content)) return { text: null, reasoning: "" };
  let text = "";
  let reasoning = "";
  for (const part of content) {
    if (typeof part !== "object" || part === null) continue;
    const { type, text: partText, thinking } = part as Record<string, unknown>;
    if (type === "text" && typeof partText === "string") text += partText;
    else if (type === "thinking") reasoning += thinkingText(thinking);
  }
  return { text, reasoning };
}

/** A thinking part's text: a string, or a list of text parts. */
function thinkingText(thinking: unknown): string {
  if (typeof thinking === "string") return thinking;
  if (!Array.isArray(thinking)) return "";
  let text = "";
  for (const part of thinking) {
    const value = (part as { text?: unknown } | null)?.text;
    if (typeof value === "string") text += value;
  }
  return text;
}

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
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  total_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  /** DeepSeek reports cache hits this way. */
  prompt_cache_hit_tokens?: unknown;
}

/**
 * OpenAI counts reasoning inside `completion_tokens`; xAI reports it beside them, with
 * `total_tokens` = prompt + completion + reasoning. The total tells the two apart.
 */
function outputTotal(usage: OpenAIUsage): unknown {
  const completion = tokenCount(usage.completion_tokens);
  const reasoning = tokenCount(usage.completion_tokens_details?.reasoning_tokens) ?? 0;
  const prompt = tokenCount(usage.prompt_tokens);
  const total = tokenCount(usage.total_tokens);
  if (completion === undefined || prompt === undefined || total === undefined || reasoning === 0)
    return usage.completion_tokens;
  return total >= prompt + completion + reasoning ? completion + reasoning : completion;
}

export function convertOpenAIUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as OpenAIUsage;
  return reportedTokenUsage(
    {
      inputTotal: usage.prompt_tokens,
      outputTotal: outputTotal(usage),
      cacheRead: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens,
      cacheWrite: usage.prompt_tokens_details?.cache_write_tokens,
      reasoning: usage.completion_tokens_details?.reasoning_tokens,
    },
    raw,
  );
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
