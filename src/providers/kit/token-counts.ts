/**
 * @module providers/kit/token-counts
 * Reads a vendor's token counts defensively, for every adapter's usage converter: a count is a
 * non-negative safe integer or it is missing (a string, a float, a negative number, null or a
 * number past 2^53 is not a count). A usage object that lacks the input or the output total is
 * no usage report at all: the endpoint then counts both sides itself, as when the vendor sent
 * none, rather than billing the missing side as 0.
 */
import type { TokenUsage } from "../../spec/index.ts";

/** `value` if it is a token count, else undefined. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

export interface ReportedTokens {
  inputTotal: unknown;
  outputTotal: unknown;
  cacheRead?: unknown;
  cacheWrite?: unknown;
  cacheWriteLong?: unknown;
  reasoning?: unknown;
}

/**
 * Normalized usage from the vendor's counts, each part within its whole (cache reads and
 * writes within the input, long writes within the writes, reasoning within the output), or
 * undefined when either total is not a count.
 */
export function reportedTokenUsage(counts: ReportedTokens, raw: unknown): TokenUsage | undefined {
  const inputTotal = tokenCount(counts.inputTotal);
  const outputTotal = tokenCount(counts.outputTotal);
  if (inputTotal === undefined || outputTotal === undefined) return undefined;
  const cacheRead = Math.min(tokenCount(counts.cacheRead) ?? 0, inputTotal);
  const cacheWrite = Math.min(tokenCount(counts.cacheWrite) ?? 0, inputTotal - cacheRead);
  const cacheWriteLong = Math.min(tokenCount(counts.cacheWriteLong) ?? 0, cacheWrite);
  return {
    input: {
      total: inputTotal,
      cacheRead,
      cacheWrite,
      ...(cacheWriteLong > 0 && { cacheWriteLong }),
    },
    output: {
      total: outputTotal,
      reasoning: Math.min(tokenCount(counts.reasoning) ?? 0, outputTotal),
    },
    source: "upstream",
    raw,
  };
}
