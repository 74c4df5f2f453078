/**
 * @module sandbox/openai-shapes
 * Renders a chat plan into OpenAI's wire shapes (pure): the `chat.completion` body, the list of
 * `chat.completion.chunk` objects of a stream, the usage object and SSE frames.
 */
import type { ChatPlan } from "./chat-reply.ts";
import type { JsonRecord } from "./chat-request.ts";
import { countTokens, groupTokens, tokenize } from "./deterministic-text.ts";

/** Text tokens per content chunk, and argument tokens per tool-call chunk. */
export const TEXT_TOKENS_PER_CHUNK = 3;
export const ARGUMENT_TOKENS_PER_CHUNK = 2;

/** Fields identical on every chunk of one response. */
export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
  systemFingerprint: string;
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: {
    cached_tokens: number;
    audio_tokens: number;
    cache_write_tokens?: number;
  };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

export function usageObject(plan: ChatPlan): OpenAIUsage {
  const cached = Math.min(plan.cachedTokens ?? 0, plan.promptTokens);
  const cacheWrite = Math.min(plan.cacheWriteTokens ?? 0, plan.promptTokens - cached);
  return {
    prompt_tokens: plan.promptTokens,
    completion_tokens: plan.completionTokens,
    total_tokens: plan.promptTokens + plan.completionTokens,
    prompt_tokens_details: {
      cached_tokens: cached,
      audio_tokens: 0,
      ...(cacheWrite > 0 ? { cache_write_tokens: cacheWrite } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: plan.reasoning ? countTokens(plan.reasoning) : 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The non-stream `chat.completion` body; `usage` is left out when `withUsage` is false. */
export function completionBody(meta: ResponseMeta, plan: ChatPlan, withUsage: boolean): JsonRecord {
  const { reply } = plan;
  const message =
    reply.kind === "tool_call"
      ? {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: reply.call.id,
              type: "function",
              function: { name: reply.call.name, arguments: reply.call.arguments },
            },
          ],
          refusal: null,
        }
      : { role: "assistant", content: reply.content, refusal: null };
  if (plan.reasoning) Object.assign(message, { reasoning_content: plan.reasoning });
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    service_tier: "default",
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    ...(withUsage ? { usage: usageObject(plan) } : {}),
  };
}

export interface ChunkOptions {
  /** `stream_options.include_usage`: adds `usage: null` to every chunk and a final usage chunk. */
  includeUsage: boolean;
  /** `no-usage` fault: keep the `usage: null` fields but never send the usage chunk. */
  omitUsageChunk: boolean;
}

/** Every chunk object of the stream, in order, without the `[DONE]` sentinel. */
export function streamChunks(
  meta: ResponseMeta,
  plan: ChatPlan,
  options: ChunkOptions,
): JsonRecord[] {
  const chunk = (choices: JsonRecord[], usage?: OpenAIUsage): JsonRecord => ({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    service_tier: "default",
    choices,
    ...(options.includeUsage ? { usage: usage ?? null } : {}),
  });
  const delta = (value: JsonRecord, finishReason: string | null = null): JsonRecord[] => [
    { index: 0, delta: value, logprobs: null, finish_reason: finishReason },
  ];
  const { reply } = plan;
  const chunks: JsonRecord[] = [];
  if (reply.kind === "tool_call") {
    const { id, name } = reply.call;
    const header = { index: 0, id, type: "function", function: { name, arguments: "" } };
    chunks.push(
      chunk(delta({ role: "assistant", content: null, tool_calls: [header], refusal: null })),
    );
    for (const fragment of groupTokens(tokenize(reply.call.arguments), ARGUMENT_TOKENS_PER_CHUNK)) {
      chunks.push(chunk(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })));
    }
  } else {
    chunks.push(chunk(delta({ role: "assistant", content: "", refusal: null })));
    for (const fragment of groupTokens(tokenize(plan.reasoning ?? ""), TEXT_TOKENS_PER_CHUNK)) {
      chunks.push(chunk(delta({ reasoning_content: fragment })));
    }
    for (const fragment of groupTokens(tokenize(reply.content), TEXT_TOKENS_PER_CHUNK)) {
      chunks.push(chunk(delta({ content: fragment })));
    }
  }
  chunks.push(chunk(delta({}, reply.finishReason)));
  if (options.includeUsage && !options.omitUsageChunk) chunks.push(chunk([], usageObject(plan)));
  return chunks;
}

/** One server-sent event carrying `data`. */
export function sseFrame(data: string): string {
  return `data: ${data}\n\n`;
}
