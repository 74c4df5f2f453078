import { describe, expect, it } from "vitest";
import type { Pricing } from "../catalog/index.ts";
import type { TokenUsage } from "../spec/index.ts";
import { priceUsage } from "./pricing.ts";

const pricing: Pricing = {
  per_1m_tokens: {
    input: 3_000_000,
    output: 15_000_000,
    cached_input: 300_000,
    cache_write: 3_750_000,
  },
};

function tokens(
  input: number,
  output: number,
  extra: Partial<TokenUsage["input"]> = {},
  reasoning = 0,
): TokenUsage {
  return {
    input: { total: input, cacheRead: 0, cacheWrite: 0, ...extra },
    output: { total: output, reasoning },
    source: "upstream",
  };
}

describe("priceUsage", () => {
  it("prices input and output per million tokens in integer micro-USD", () => {
    const priced = priceUsage(pricing, { tokens: tokens(1_000_000, 1_000_000) });
    expect(priced.costMicros).toBe(18_000_000);
    expect(priced.lineItems.map((item) => [item.item, item.costMicros])).toEqual([
      ["input", 3_000_000],
      ["output", 15_000_000],
    ]);
  });

  it("rounds each line item up to the next micro-USD and sums the items", () => {
    // 1 input token = 3 micro-USD exactly; 1 output token = 15; 1 cached = 0.3 → 1.
    const priced = priceUsage(pricing, { tokens: tokens(2, 1, { cacheRead: 1 }) });
    expect(priced.lineItems.map((item) => [item.item, item.costMicros])).toEqual([
      ["input", 3],
      ["cached_input", 1],
      ["output", 15],
    ]);
    expect(priced.costMicros).toBe(19);
    expect(Number.isInteger(priced.costMicros)).toBe(true);
  });

  it("prices cache reads and cache writes at their own prices and never counts them twice", () => {
    const priced = priceUsage(pricing, {
      tokens: tokens(10_000, 0, { cacheRead: 6_000, cacheWrite: 3_000 }),
    });
    const byItem = Object.fromEntries(priced.lineItems.map((item) => [item.item, item]));
    expect(byItem.input?.units).toBe(1_000);
    expect(byItem.cached_input?.units).toBe(6_000);
    expect(byItem.cache_write?.units).toBe(3_000);
    expect(priced.costMicros).toBe(3_000 + 1_800 + 11_250);
  });

  it("bills reasoning tokens inside output once, at the reasoning price when one is set", () => {
    const withReasoningPrice: Pricing = {
      per_1m_tokens: { input: 0, output: 10_000_000, reasoning: 20_000_000 },
    };
    const priced = priceUsage(withReasoningPrice, { tokens: tokens(0, 1_000, {}, 400) });
    expect(priced.lineItems.map((item) => [item.item, item.units, item.costMicros])).toEqual([
      ["output", 600, 6_000],
      ["reasoning", 400, 8_000],
    ]);
  });

  it("prices images by size and quality, video seconds by resolution and characters per 10k", () => {
    const media: Pricing = {
      per_image: {
        default: 40_000,
        by_size: { "256x256": 16_000 },
        by_size_quality: { "1024x1024": { high: 167_000 } },
      },
      per_video_second: { "720p": 100_000 },
      per_10k_characters: 100_000,
    };
    expect(
      priceUsage(media, {
        media: { images: { count: 2, size: "1024x1024", quality: "high" }, source: "upstream" },
      }).costMicros,
    ).toBe(334_000);
    expect(
      priceUsage(media, { media: { images: { count: 3, size: "256x256" }, source: "upstream" } })
        .costMicros,
    ).toBe(48_000);
    expect(
      priceUsage(media, { media: { images: { count: 1, size: "999x999" }, source: "upstream" } })
        .costMicros,
    ).toBe(40_000);
    expect(
      priceUsage(media, {
        media: { videoSeconds: { seconds: 5, resolution: "720p" }, source: "upstream" },
      }).costMicros,
    ).toBe(500_000);
    expect(priceUsage(media, { media: { characters: 57, source: "upstream" } }).costMicros).toBe(
      570,
    );
    expect(() =>
      priceUsage(media, {
        media: { videoSeconds: { seconds: 5, resolution: "4k" }, source: "upstream" },
      }),
    ).toThrow(/4k/);
  });
});
