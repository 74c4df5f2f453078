/**
 * @module sandbox/gemini-shapes
 * Renders a chat plan into Gemini's wire shapes (pure): the `GenerateContentResponse` body, the
 * chunks of `streamGenerateContent`, and `usageMetadata`. A plan may carry a thought summary
 * (`thinkingConfig.includeThoughts`), rendered as a leading `thought: true` part whose tokens are
 * reported as `thoughtsTokenCount`, outside `candidatesTokenCount` as Google counts them.
 * @see https://ai.google.dev/api/generate-content#generatecontentresponse
 */
import type { ChatPlan } from "./chat-reply.ts";
import type { JsonRecord } from "./chat-request.ts";
import { groupTokens, tokenize } from "./deterministic-text.ts";
import { signsFunctionCalls } from "./gemini-model-rules.ts";
import { TEXT_TOKENS_PER_CHUNK } from "./openai-shapes.ts";

export interface GeminiPlan extends ChatPlan {
  /** Thought summary text, when thoughts were asked for. */
  thought?: string;
  thoughtTokens: number;
}

/** Fields identical on every chunk of one response. */
export interface GeminiMeta {
  model: string;
  responseId: string;
}

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export function usageMetadata(plan: GeminiPlan): GeminiUsageMetadata {
  const cached = Math.min(plan.cachedTokens ?? 0, plan.promptTokens);
  return {
    promptTokenCount: plan.promptTokens,
    candidatesTokenCount: plan.completionTokens,
    totalTokenCount: plan.promptTokens + plan.completionTokens + plan.thoughtTokens,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    ...(plan.thoughtTokens > 0 ? { thoughtsTokenCount: plan.thoughtTokens } : {}),
  };
}

/** STOP also ends a function call; MAX_TOKENS is the cap. */
export function geminiFinishReason(plan: ChatPlan): "STOP" | "MAX_TOKENS" {
  return plan.reply.finishReason === "length" ? "MAX_TOKENS" : "STOP";
}

function answerParts(plan: ChatPlan, model: string): JsonRecord[] {
  const { reply } = plan;
  if (reply.kind === "tool_call") {
    const args = JSON.parse(reply.call.arguments) as JsonRecord;
    // An opaque signature beside the call, as Gemini 3 sends one (deterministic here).
    const signature = signsFunctionCalls(model)
      ? { thoughtSignature: Buffer.from(`sandbox:${reply.call.name}`).toString("base64") }
      : {};
    return [{ functionCall: { name: reply.call.name, args }, ...signature }];
  }
  return [{ text: reply.content }];
}

function candidate(parts: JsonRecord[], finishReason?: string): JsonRecord {
  return {
    content: { parts, role: "model" },
    ...(finishReason ? { finishReason } : {}),
    index: 0,
  };
}

/** The non-stream body; `usageMetadata` is left out when `withUsage` is false. */
export function generateContentBody(
  meta: GeminiMeta,
  plan: GeminiPlan,
  withUsage: boolean,
): JsonRecord {
  const thought = plan.thought === undefined ? [] : [{ text: plan.thought, thought: true }];
  return {
    candidates: [
      candidate([...thought, ...answerParts(plan, meta.model)], geminiFinishReason(plan)),
    ],
    ...(withUsage ? { usageMetadata: usageMetadata(plan) } : {}),
    modelVersion: meta.model,
    responseId: meta.responseId,
  };
}

/**
 * Every chunk of a stream, in order: thought fragments, then text fragments (a function call
 * arrives whole in one chunk). The last chunk carries `finishReason` and the full usage; earlier
 * chunks carry only the prompt count, as Gemini does. `withUsage: false` drops every usage.
 */
export function streamChunks(meta: GeminiMeta, plan: GeminiPlan, withUsage: boolean): JsonRecord[] {
  const { reply } = plan;
  const parts: JsonRecord[] = [];
  if (plan.thought !== undefined) {
    for (const fragment of groupTokens(tokenize(plan.thought), TEXT_TOKENS_PER_CHUNK))
      parts.push({ text: fragment, thought: true });
  }
  if (reply.kind === "tool_call") parts.push(...answerParts(plan, meta.model));
  else {
    const fragments = groupTokens(tokenize(reply.content), TEXT_TOKENS_PER_CHUNK);
    for (const fragment of fragments.length ? fragments : [""]) parts.push({ text: fragment });
  }
  const running = { promptTokenCount: plan.promptTokens, totalTokenCount: plan.promptTokens };
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    return {
      candidates: [candidate([part], last ? geminiFinishReason(plan) : undefined)],
      ...(withUsage ? { usageMetadata: last ? usageMetadata(plan) : running } : {}),
      modelVersion: meta.model,
      responseId: meta.responseId,
    };
  });
}
