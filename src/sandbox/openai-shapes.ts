/**
 * @module sandbox/openai-shapes
 * Renders chat plans into OpenAI's wire shapes (pure): the `chat.completion` body, the list of
 * `chat.completion.chunk` objects of a stream, the usage object and SSE frames. With `n` above 1
 * there is one plan per choice: the prompt is counted once, the completion tokens of every
 * choice are added up, and a stream interleaves the choices' chunks, each naming its `index`.
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

/** One plan per choice (a single plan is one choice). */
export type ChatPlans = ChatPlan | readonly ChatPlan[];

function listed(plans: ChatPlans): readonly ChatPlan[] {
  return Array.isArray(plans) ? plans : [plans as ChatPlan];
}

export function usageObject(plans: ChatPlans): OpenAIUsage {
  const all = listed(plans);
  const plan = all[0]!;
  const completionTokens = all.reduce((sum, choice) => sum + choice.completionTokens, 0);
  const reasoningTokens = all.reduce(
    (sum, choice) => sum + (choice.reasoning ? countTokens(choice.reasoning) : 0),
    0,
  );
  const cached = Math.min(plan.cachedTokens ?? 0, plan.promptTokens);
  const cacheWrite = Math.min(plan.cacheWriteTokens ?? 0, plan.promptTokens - cached);
  return {
    prompt_tokens: plan.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: plan.promptTokens + completionTokens,
    prompt_tokens_details: {
      cached_tokens: cached,
      audio_tokens: 0,
      ...(cacheWrite > 0 ? { cache_write_tokens: cacheWrite } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function message(plan: ChatPlan): JsonRecord {
  const { reply } = plan;
  const body =
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
  if (plan.reasoning) Object.assign(body, { reasoning_content: plan.reasoning });
  return body;
}

/** The non-stream `chat.completion` body; `usage` is left out when `withUsage` is false. */
export function completionBody(
  meta: ResponseMeta,
  plans: ChatPlans,
  withUsage: boolean,
): JsonRecord {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    service_tier: "default",
    choices: listed(plans).map((plan, index) => ({
      index,
      message: message(plan),
      logprobs: null,
      finish_reason: plan.reply.finishReason,
    })),
    ...(withUsage ? { usage: usageObject(plans) } : {}),
  };
}

export interface ChunkOptions {
  /** `stream_options.include_usage`: adds `usage: null` to every chunk and a final usage chunk. */
  includeUsage: boolean;
  /** `no-usage` fault: keep the `usage: null` fields but never send the usage chunk. */
  omitUsageChunk: boolean;
}

/** The `choices` entries one choice's stream is made of, in order. */
function choiceDeltas(plan: ChatPlan, index: number): JsonRecord[] {
  const delta = (value: JsonRecord, finishReason: string | null = null): JsonRecord => ({
    index,
    delta: value,
    logprobs: null,
    finish_reason: finishReason,
  });
  const { reply } = plan;
  const deltas: JsonRecord[] = [];
  if (reply.kind === "tool_call") {
    const { id, name } = reply.call;
    const header = { index: 0, id, type: "function", function: { name, arguments: "" } };
    deltas.push(delta({ role: "assistant", content: null, tool_calls: [header], refusal: null }));
    for (const fragment of groupTokens(tokenize(reply.call.arguments), ARGUMENT_TOKENS_PER_CHUNK)) {
      deltas.push(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
    }
  } else {
    deltas.push(delta({ role: "assistant", content: "", refusal: null }));
    for (const fragment of groupTokens(tokenize(plan.reasoning ?? ""), TEXT_TOKENS_PER_CHUNK)) {
      deltas.push(delta({ reasoning_content: fragment }));
    }
    for (const fragment of groupTokens(tokenize(reply.content), TEXT_TOKENS_PER_CHUNK)) {
      deltas.push(delta({ content: fragment }));
    }
  }
  deltas.push(delta({}, reply.finishReason));
  return deltas;
}

/**
 * Every chunk object of the stream, in order, without the `[DONE]` sentinel. Several choices
 * take turns, one chunk each, as OpenAI interleaves them.
 */
export function streamChunks(
  meta: ResponseMeta,
  plans: ChatPlans,
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
  const perChoice = listed(plans).map(choiceDeltas);
  const chunks: JsonRecord[] = [];
  const longest = Math.max(...perChoice.map((deltas) => deltas.length));
  for (let turn = 0; turn < longest; turn++) {
    for (const deltas of perChoice) {
      const entry = deltas[turn];
      if (entry) chunks.push(chunk([entry]));
    }
  }
  if (options.includeUsage && !options.omitUsageChunk) chunks.push(chunk([], usageObject(plans)));
  return chunks;
}

/** One server-sent event carrying `data`. */
export function sseFrame(data: string): string {
  return `data: ${data}\n\n`;
}
