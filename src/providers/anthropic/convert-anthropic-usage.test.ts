import { describe, expect, it } from "vitest";
import { convertAnthropicUsage, mergeAnthropicUsage } from "./convert-anthropic-usage.ts";

describe("convertAnthropicUsage", () => {
  it("adds cache reads and writes back into the input total", () => {
    const raw = {
      input_tokens: 12,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 2048,
      output_tokens: 30,
    };
    expect(convertAnthropicUsage(raw)).toEqual({
      input: { total: 2160, cacheRead: 2048, cacheWrite: 100 },
      output: { total: 30, reasoning: 0 },
      source: "upstream",
      raw,
    });
  });

  it("treats null cache fields as 0 and missing usage as undefined", () => {
    expect(
      convertAnthropicUsage({
        input_tokens: 5,
        output_tokens: 1,
        cache_read_input_tokens: null,
        cache_creation_input_tokens: null,
      })?.input,
    ).toEqual({ total: 5, cacheRead: 0, cacheWrite: 0 });
    expect(convertAnthropicUsage(undefined)).toBeUndefined();
    expect(convertAnthropicUsage({ service_tier: "standard" })).toBeUndefined();
  });
});

describe("mergeAnthropicUsage", () => {
  it("keeps message_start's input counts and takes message_delta's cumulative output", () => {
    const start = { input_tokens: 10, cache_read_input_tokens: 4, output_tokens: 1 };
    expect(mergeAnthropicUsage(start, { output_tokens: 25 })).toEqual({
      input_tokens: 10,
      cache_read_input_tokens: 4,
      output_tokens: 25,
    });
    expect(mergeAnthropicUsage(undefined, undefined)).toBeUndefined();
    expect(mergeAnthropicUsage(start, { input_tokens: null, output_tokens: 3 })).toMatchObject({
      input_tokens: 10,
      output_tokens: 3,
    });
  });
});
