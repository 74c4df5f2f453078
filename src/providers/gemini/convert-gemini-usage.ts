/**
 * @module providers/gemini/convert-gemini-usage
 * Converts Gemini's `usageMetadata` to normalized usage. Gemini reports thinking tokens
 * (`thoughtsTokenCount`) outside `candidatesTokenCount`, so they are added to the output total;
 * `promptTokenCount` already includes the cached tokens (`cachedContentTokenCount`).
 * @see https://ai.google.dev/api/generate-content#UsageMetadata
 */
import type { TokenUsage } from "../../spec/index.ts";
import type { GeminiUsageMetadata } from "./gemini-api-types.ts";

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) ? value : 0;

export function convertGeminiUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as GeminiUsageMetadata;
  if (typeof usage.promptTokenCount !== "number" && typeof usage.candidatesTokenCount !== "number")
    return undefined;
  const reasoning = count(usage.thoughtsTokenCount);
  return {
    input: {
      // Tokens of tool-use prompts (e.g. search results) are billed as input as well.
      total: count(usage.promptTokenCount) + count(usage.toolUsePromptTokenCount),
      cacheRead: count(usage.cachedContentTokenCount),
      cacheWrite: 0,
    },
    output: { total: count(usage.candidatesTokenCount) + reasoning, reasoning },
    source: "upstream",
    raw,
  };
}
