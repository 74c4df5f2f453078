/**
 * @module sandbox/anthropic-reply
 * Plans an Anthropic answer (pure) on top of the shared planner `planChatReply`: the content
 * blocks (an optional thinking block, then text or one `tool_use`), the stop reason and the
 * usage. Non-stream bodies and streams are both rendered from this plan.
 *
 * - Thinking (`thinking.type` `enabled` or `adaptive`): a deterministic thinking block with a
 *   signature comes first; its tokens count as output and come out of `max_tokens`.
 * - A `{` prefill gets the rest of the planner's JSON object, so prefill + reply parses.
 * - `stop_sequences`: the text is cut before the first one found (`stop_reason: stop_sequence`).
 * - Usage: `input_tokens` excludes cache reads and writes (Anthropic's convention), so
 *   `input_tokens + cache_read + cache_creation` is the planner's prompt count.
 */
import type { NormalizedAnthropic } from "./anthropic-normalize.ts";
import type { AnthropicRequest } from "./anthropic-request.ts";
import { planChatReply, requestSeed } from "./chat-reply.ts";
import type { JsonRecord } from "./chat-request.ts";
import { countTokens, hexId, pickWords } from "./deterministic-text.ts";

/** Words of the thinking block (fewer when `max_tokens` is tiny). */
export const THINKING_WORDS = 12;
const THINKING_SALT = 0x7468696e;
const SIGNATURE_SALT = 0x5167;

export type PlannedBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  /** `json` is the input as JSON text, the way it is streamed. */
  | { type: "tool_use"; id: string; name: string; input: JsonRecord; json: string };

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface AnthropicPlan {
  blocks: PlannedBlock[];
  stopReason: AnthropicStopReason;
  stopSequence: string | null;
  usage: AnthropicUsage;
}

export interface AnthropicPlanOptions {
  /** The `words` fault: reply length (still capped by `max_tokens`). */
  words?: number;
  /** The `off-schema` fault. */
  offSchema?: boolean;
  /** The `cached-tokens` and `cache-write-tokens` faults. */
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/** Deterministic thinking text of `words` words. */
export function thinkingText(seed: number, words: number): string {
  const lead = ["Sandbox", "thinking", "about", "the", "request:"];
  return [...lead, ...pickWords(seed ^ THINKING_SALT, Math.max(0, words - lead.length))]
    .slice(0, words)
    .join(" ");
}

/** A stable opaque signature, like the base64 ones Anthropic attaches to thinking blocks. */
export function thinkingSignature(seed: number): string {
  return Buffer.from(`sandbox-signature:${hexId(seed ^ SIGNATURE_SALT, 48)}`).toString("base64");
}

/** Cuts the text before the earliest stop sequence, if any occurs. */
export function applyStopSequences(
  text: string,
  sequences: readonly string[],
): { text: string; sequence: string | null } {
  let cut = -1;
  let found: string | null = null;
  for (const sequence of sequences) {
    const at = sequence === "" ? -1 : text.indexOf(sequence);
    if (at !== -1 && (cut === -1 || at < cut)) {
      cut = at;
      found = sequence;
    }
  }
  return found === null ? { text, sequence: null } : { text: text.slice(0, cut), sequence: found };
}

export function planAnthropicReply(
  request: Pick<AnthropicRequest, "stopSequences" | "thinking">,
  normalized: NormalizedAnthropic,
  options: AnthropicPlanOptions = {},
): AnthropicPlan {
  const { chat } = normalized;
  const seed = requestSeed(chat);
  const maxTokens = chat.maxTokens ?? Number.MAX_SAFE_INTEGER;
  const blocks: PlannedBlock[] = [];
  let outputTokens = 0;
  if (request.thinking) {
    const words = Math.min(THINKING_WORDS, maxTokens - 1);
    if (words > 0) {
      const thinking = thinkingText(seed, words);
      blocks.push({ type: "thinking", thinking, signature: thinkingSignature(seed) });
      outputTokens += countTokens(thinking);
    }
  }
  const capped = {
    ...chat,
    maxTokens: chat.maxTokens === undefined ? undefined : maxTokens - outputTokens,
  };
  const plan = planChatReply(capped, { words: options.words, offSchema: options.offSchema });
  let stopReason: AnthropicStopReason;
  let stopSequence: string | null = null;
  if (plan.reply.kind === "tool_call") {
    const { call } = plan.reply;
    const input = JSON.parse(call.arguments) as JsonRecord;
    const id = `toolu_01${call.id.slice("call_".length, "call_".length + 22)}`;
    blocks.push({ type: "tool_use", id, name: call.name, input, json: call.arguments });
    outputTokens += plan.completionTokens;
    stopReason = "tool_use";
  } else {
    const continued =
      chat.jsonObject && plan.reply.content.startsWith("{")
        ? plan.reply.content.slice(1)
        : plan.reply.content;
    const stopped = applyStopSequences(continued, request.stopSequences);
    blocks.push({ type: "text", text: stopped.text });
    outputTokens += countTokens(stopped.text);
    stopSequence = stopped.sequence;
    stopReason =
      stopSequence !== null
        ? "stop_sequence"
        : plan.reply.finishReason === "length"
          ? "max_tokens"
          : "end_turn";
  }
  const prompt = plan.promptTokens;
  const cacheRead = Math.min(options.cachedTokens ?? 0, prompt);
  const cacheWrite = Math.min(options.cacheWriteTokens ?? 0, prompt - cacheRead);
  return {
    blocks,
    stopReason,
    stopSequence,
    usage: {
      input_tokens: prompt - cacheRead - cacheWrite,
      cache_creation_input_tokens: cacheWrite,
      cache_read_input_tokens: cacheRead,
      output_tokens: outputTokens,
    },
  };
}
