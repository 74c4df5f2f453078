/**
 * @module endpoints/speech/estimate-speech-cost
 * Speech is billed per input character, counted as Unicode code points (an emoji or a CJK
 * character is one, a UTF-16 surrogate pair is not two). The count is exact before the call, so
 * the hold is the charge.
 */
import { type CostEstimate, priceUsage } from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { MediaUsage } from "../../spec/index.ts";
import type { SpeechRequest } from "./schema.ts";

/** Unicode code points of a text. */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The usage a request is billed for; `upstreamCharacters` is kept for audit only. */
export function speechUsage(text: string, upstreamCharacters?: number): MediaUsage {
  return {
    characters: countCharacters(text),
    source: "estimated",
    ...(upstreamCharacters !== undefined ? { raw: { characters: upstreamCharacters } } : {}),
  };
}

export async function estimateSpeechCost(
  body: SpeechRequest,
  model: CatalogModel,
): Promise<CostEstimate> {
  const priced = priceUsage(model.pricing, { media: speechUsage(body.input) });
  // The characters are the input and the whole price: also what a crash mid-request charges.
  return { ...priced, floorMicros: priced.costMicros };
}
