/**
 * @module endpoints/embeddings/estimate-embedding-cost
 * The billing hold of an embedding request: the input counted with the gateway's tokenizer, with
 * a margin for vendors whose tokenizers split finer and one token per input of framing, priced
 * at the model's input price. Embeddings produce no output tokens. An upper bound, not the charge.
 */
import { type CostEstimate, countTokens, priceUsage } from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { TokenUsage } from "../../spec/index.ts";
import type { EmbeddingRequest } from "./schema.ts";

/** Other vendors' tokenizers yield up to ~20% more tokens than o200k for the same text. */
export const TOKENIZER_MARGIN = 1.25;

/** Token usage of embedding `inputTokens` prompt tokens (no output). */
export function embeddingTokenUsage(
  inputTokens: number,
  source: TokenUsage["source"],
  raw?: unknown,
): TokenUsage {
  return {
    input: { total: inputTokens, cacheRead: 0, cacheWrite: 0 },
    output: { total: 0, reasoning: 0 },
    source,
    ...(raw === undefined ? {} : { raw }),
  };
}

async function countInput(input: EmbeddingRequest["input"]): Promise<number> {
  if (typeof input === "string") return countTokens(input);
  let tokens = 0;
  const texts: string[] = [];
  for (const item of input) {
    if (typeof item === "string") texts.push(item);
    else tokens += Array.isArray(item) ? item.length : 1; // token ids count as themselves
  }
  return tokens + (texts.length ? await countTokens(texts.join("\n")) : 0);
}

export async function estimateEmbeddingCost(
  body: EmbeddingRequest,
  model: CatalogModel,
): Promise<CostEstimate> {
  const single = typeof body.input === "string" || typeof body.input[0] === "number";
  const inputs = single ? 1 : body.input.length;
  const tokens = Math.ceil((await countInput(body.input)) * TOKENIZER_MARGIN) + inputs;
  const priced = priceUsage(model.pricing, { tokens: embeddingTokenUsage(tokens, "estimated") });
  // The input is the whole price; a conservative count of it (the hold without its margin) is
  // what a request is charged if the gateway dies before settling it.
  const floor = Math.floor(priced.costMicros / (TOKENIZER_MARGIN * 2));
  return { ...priced, floorMicros: floor };
}
