/**
 * @module providers/gemini/convert-gemini-usage
 * Converts Gemini's `usageMetadata` to normalized usage. Gemini reports thinking tokens
 * (`thoughtsTokenCount`) outside `candidatesTokenCount`, so they are added to the output total;
 * `promptTokenCount` already includes the cached tokens (`cachedContentTokenCount`).
 * @see https://ai.google.dev/api/generate-content#UsageMetadata
 */
import type { TokenUsage } from "../../spec/index.ts";
import { reportedTokenUsage, tokenCount } from "../kit/token-counts.ts";
import type { GeminiUsageMetadata } from "./gemini-api-types.ts";

export function convertGeminiUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as GeminiUsageMetadata;
  const prompt = tokenCount(usage.promptTokenCount);
  const candidates = tokenCount(usage.candidatesTokenCount);
  const reasoning = tokenCount(usage.thoughtsTokenCount) ?? 0;
  // An answer of thoughts only (or nothing) may leave `candidatesTokenCount` out.
  const output =
    candidates ??
    (prompt !== undefined && usage.candidatesTokenCount === undefined ? 0 : undefined);
  return reportedTokenUsage(
    {
      // Tokens of tool-use prompts (e.g. search results) are billed as input as well.
      inputTotal:
        prompt === undefined
          ? undefined
          : prompt + (tokenCount(usage.toolUsePromptTokenCount) ?? 0),
      outputTotal: output === undefined ? undefined : output + reasoning,
      cacheRead: usage.cachedContentTokenCount,
      reasoning,
    },
    raw,
  );
}
