import { describe, expect, it } from "vitest";
import { convertGeminiUsage } from "./convert-gemini-usage.ts";

describe("convertGeminiUsage", () => {
  it("adds thoughts to the output and keeps cached tokens inside the input", () => {
    const raw = {
      promptTokenCount: 100,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 30,
      cachedContentTokenCount: 40,
      totalTokenCount: 150,
    };
    expect(convertGeminiUsage(raw)).toEqual({
      input: { total: 100, cacheRead: 40, cacheWrite: 0 },
      output: { total: 50, reasoning: 30 },
      source: "upstream",
      raw,
    });
  });

  it("counts tool-use prompt tokens as input and tolerates missing counts", () => {
    expect(convertGeminiUsage({ promptTokenCount: 5, toolUsePromptTokenCount: 7 })).toMatchObject({
      input: { total: 12, cacheRead: 0 },
      output: { total: 0, reasoning: 0 },
    });
  });

  it("gives undefined without counts", () => {
    expect(convertGeminiUsage(undefined)).toBeUndefined();
    expect(convertGeminiUsage({ totalTokenCount: 3 })).toBeUndefined();
  });
});
