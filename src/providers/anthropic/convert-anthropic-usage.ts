/**
 * @module providers/anthropic/convert-anthropic-usage
 * Converts Anthropic usage to the normalized form. Anthropic's `input_tokens` excludes cache
 * reads and cache writes, so the normalized `input.total` adds them back. Anthropic does not
 * report thinking tokens apart from `output_tokens`, so `output.reasoning` stays 0. Writes to
 * the 1-hour cache (`cache_creation.ephemeral_1h_input_tokens`), billed at a higher rate than
 * 5-minute ones, are `input.cacheWriteLong`.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance
 */
import type { TokenUsage } from "../../spec/index.ts";
import { reportedTokenUsage, tokenCount } from "../kit/token-counts.ts";
import type { AnthropicUsage } from "./anthropic-api.ts";

export function convertAnthropicUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as AnthropicUsage & {
    cache_creation?: { ephemeral_1h_input_tokens?: unknown } | null;
  };
  const fresh = tokenCount(usage.input_tokens);
  const cacheRead = tokenCount(usage.cache_read_input_tokens) ?? 0;
  const cacheWrite = tokenCount(usage.cache_creation_input_tokens) ?? 0;
  return reportedTokenUsage(
    {
      inputTotal: fresh === undefined ? undefined : fresh + cacheRead + cacheWrite,
      outputTotal: usage.output_tokens,
      cacheRead,
      cacheWrite,
      cacheWriteLong: usage.cache_creation?.ephemeral_1h_input_tokens,
    },
    raw,
  );
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

/**
 * `message_start`'s usage as a report: its input and cache counts, and no output yet. Its
 * `output_tokens` is a placeholder (1 at the start), not a count of the answer: only
 * `message_delta` reports output, and a stream that ends without one is counted by the gateway
 * (`completedUsage`).
 */
export function startUsage(raw: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  return { ...raw, output_tokens: 0 };
}
