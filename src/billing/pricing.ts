/**
 * @module billing/pricing
 * Turns normalized usage into a cost with an itemized breakdown, from the catalog's integer
 * prices. Rounding rule: each line item is rounded UP to the next whole micro-USD, and the total
 * is the sum of the line items, so the breakdown always adds up to what is charged.
 */
import type { Pricing } from "../catalog/index.ts";
import type { MediaUsage, TokenUsage, Usage } from "../spec/index.ts";

export interface LineItem {
  item:
    | "input"
    | "cached_input"
    | "cache_write"
    | "cache_write_1h"
    | "output"
    | "reasoning"
    | "images"
    | "video_seconds"
    | "characters";
  units: number;
  /** Price per `per` units, in micro-USD. */
  unitPriceMicros: number;
  per: number;
  costMicros: number;
}

export interface PricedUsage {
  costMicros: number;
  lineItems: LineItem[];
}

/** A request's hold, and the least it costs once sent (charged if the process dies). */
export interface CostEstimate extends PricedUsage {
  /** The input's cost (a conservative count), at most `costMicros`; 0 when unknown. */
  floorMicros?: number;
}

function lineItem(
  item: LineItem["item"],
  units: number,
  unitPriceMicros: number,
  per: number,
): LineItem {
  // Integer arithmetic: units * price fits easily in 2^53 for any real request.
  const costMicros =
    units <= 0 || unitPriceMicros === 0 ? 0 : Math.ceil((units * unitPriceMicros) / per);
  return { item, units: Math.max(0, units), unitPriceMicros, per, costMicros };
}

/** A count as priced: a non-negative safe integer, anything else 0. */
const units = (value: number | undefined): number =>
  value !== undefined && Number.isSafeInteger(value) && value > 0 ? value : 0;

export function priceTokens(pricing: Pricing, usage: TokenUsage): LineItem[] {
  const prices = pricing.per_1m_tokens;
  if (!prices) return [];
  const M = 1_000_000;
  // Cached reads and cache writes are part of `input.total`, long writes part of the writes,
  // reasoning part of the output: each token is priced exactly once, whatever a vendor reported.
  const inputTotal = units(usage.input.total);
  const cacheRead = Math.min(units(usage.input.cacheRead), inputTotal);
  const cacheWrite = Math.min(units(usage.input.cacheWrite), inputTotal - cacheRead);
  const longWrite = Math.min(units(usage.input.cacheWriteLong), cacheWrite);
  const outputTotal = units(usage.output.total);
  const reasoning = Math.min(units(usage.output.reasoning), outputTotal);
  return [
    lineItem("input", inputTotal - cacheRead - cacheWrite, prices.input, M),
    lineItem("cached_input", cacheRead, prices.cached_input ?? prices.input, M),
    lineItem("cache_write", cacheWrite - longWrite, prices.cache_write ?? prices.input, M),
    lineItem("cache_write_1h", longWrite, longCacheWritePrice(prices), M),
    lineItem("output", outputTotal - reasoning, prices.output, M),
    lineItem("reasoning", reasoning, prices.reasoning ?? prices.output, M),
  ].filter((item) => item.units > 0);
}

/** A 1-hour cache write's price: as configured, else Anthropic's rate, twice the input's. */
export function longCacheWritePrice(prices: { input: number; cache_write_1h?: number }): number {
  return prices.cache_write_1h ?? prices.input * 2;
}

export function imagePrice(pricing: Pricing, size?: string, quality?: string): number {
  const prices = pricing.per_image;
  if (!prices) return 0;
  return (
    (size && quality ? prices.by_size_quality?.[size]?.[quality] : undefined) ??
    (size ? prices.by_size?.[size] : undefined) ??
    prices.default
  );
}

export function priceMedia(pricing: Pricing, usage: MediaUsage): LineItem[] {
  const items: LineItem[] = [];
  if (usage.images) {
    items.push(
      lineItem(
        "images",
        usage.images.count,
        imagePrice(pricing, usage.images.size, usage.images.quality),
        1,
      ),
    );
  }
  if (usage.videoSeconds && pricing.per_video_second) {
    const price = pricing.per_video_second[usage.videoSeconds.resolution];
    if (price === undefined)
      throw new Error(`No video price for resolution ${usage.videoSeconds.resolution}`);
    items.push(lineItem("video_seconds", usage.videoSeconds.seconds, price, 1));
  }
  if (usage.characters !== undefined && pricing.per_10k_characters !== undefined) {
    items.push(lineItem("characters", usage.characters, pricing.per_10k_characters, 10_000));
  }
  return items;
}

export function priceUsage(pricing: Pricing, usage: Usage): PricedUsage {
  const lineItems = [
    ...(usage.tokens ? priceTokens(pricing, usage.tokens) : []),
    ...(usage.media ? priceMedia(pricing, usage.media) : []),
  ];
  return { costMicros: lineItems.reduce((sum, item) => sum + item.costMicros, 0), lineItems };
}

/** `{input: 25, output: 100}` — the breakdown stored with a charge and shown to users. */
export function breakdownOf(lineItems: LineItem[]): Record<string, number> {
  return Object.fromEntries(lineItems.map((item) => [item.item, item.costMicros]));
}
