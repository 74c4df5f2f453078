/**
 * @module providers/anthropic/convert-anthropic-usage
 * Converts Anthropic usage to the normalized form. Anthropic's `input_tokens` excludes cache
 * reads and cache writes, so the normalized `input.total` adds them back. Anthropic does not
 * report thinking tokens apart from `output_tokens`, so `output.reasoning` stays 0.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance
 */
import type { TokenUsage } from "../../spec/index.ts";
import type { AnthropicUsage } from "./anthropic-api.ts";

const count = (value: unknown): number => (typeof value === "number" ? value : 0);

export function convertAnthropicUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as AnthropicUsage;
  if (typeof usage.input_tokens !== "number" && typeof usage.output_tokens !== "number") {
    return undefined;
  }
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  return {
    input: { total: count(usage.input_tokens) + cacheRead + cacheWrite, cacheRead, cacheWrite },
    output: { total: count(usage.output_tokens), reasoning: 0 },
    source: "upstream",
    raw,
  };
}

/**
 * Merges stream usage: `message_start` carries the input and cache counts, `message_delta` the
 * cumulative output (newer API versions may repeat the others). Later numbers win.
 */
export function mergeAnthropicUsage(
  current: AnthropicUsage | undefined,
  next: AnthropicUsage | undefined,
): AnthropicUsage | undefined {
  if (!next) return current;
  const merged: AnthropicUsage = { ...current };
  for (const [key, value] of Object.entries(next) as Array<[keyof AnthropicUsage, unknown]>) {
    if (typeof value === "number") merged[key] = value;
  }
  return merged;
}
