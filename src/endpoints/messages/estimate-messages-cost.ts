/**
 * @module endpoints/messages/estimate-messages-cost
 * The billing hold of a Messages request (system, messages and tools counted with the real
 * tokenizer, plus `max_tokens`), and the local `count_tokens` answer for translated routes.
 */
import {
  type CostEstimate,
  countTokens,
  longCacheWritePrice,
  priceUsage,
} from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { CountTokensRequest } from "./schema.ts";

const TOKENIZER_MARGIN = 1.25;
const IMAGE_TOKENS = 1_600;
const PER_MESSAGE_OVERHEAD = 4;

function requestText(body: CountTokensRequest): { text: string; images: number } {
  let images = 0;
  const parts: string[] = [];
  const system = body.system;
  if (typeof system === "string") parts.push(system);
  else if (system) for (const block of system) parts.push(block.text);
  for (const message of body.messages) {
    if (typeof message.content === "string") {
      parts.push(message.content);
      continue;
    }
    for (const block of message.content) {
      if (block.type === "image") images += 1;
      else if (block.type === "text" && "text" in block) parts.push(String(block.text));
      else parts.push(JSON.stringify(block));
    }
  }
  if (body.tools) parts.push(JSON.stringify(body.tools));
  return { text: parts.join("\n"), images };
}

/** The prompt's tokens as the gateway counts them: exact o200k tokens, images and framing. */
export async function countMessagesTokens(
  body: CountTokensRequest,
  options: { exact: boolean },
): Promise<number> {
  const { text, images } = requestText(body);
  return (
    (await countTokens(text, { exact: options.exact })) +
    images * IMAGE_TOKENS +
    body.messages.length * PER_MESSAGE_OVERHEAD
  );
}

/** The output cap sent upstream: `max_tokens`, at most the model's output limit. */
export function messagesOutputCap(body: { max_tokens: number }, model: CatalogModel): number {
  return Math.min(body.max_tokens, model.capabilities?.max_output_tokens ?? Infinity);
}

/**
 * The dearest cache write the request can cause: a `cache_control` block asks the vendor to
 * write the prompt up to it into its cache, at a higher rate than plain input (`1h`: the
 * 1-hour cache, dearer still).
 */
function cacheWrites(body: CountTokensRequest): "none" | "short" | "long" {
  let found: "none" | "short" | "long" = "none";
  const look = (block: unknown) => {
    const control = (block as { cache_control?: { ttl?: unknown } | null }).cache_control;
    if (typeof control !== "object" || control === null) return;
    found = control.ttl === "1h" ? "long" : found === "none" ? "short" : found;
  };
  if (Array.isArray(body.system)) for (const block of body.system) look(block);
  for (const message of body.messages)
    if (Array.isArray(message.content)) for (const block of message.content) look(block);
  for (const tool of body.tools ?? []) look(tool);
  return found;
}

export async function estimateMessagesCost(
  body: CountTokensRequest & { max_tokens: number },
  model: CatalogModel,
): Promise<CostEstimate> {
  const input = Math.ceil((await countMessagesTokens(body, { exact: false })) * TOKENIZER_MARGIN);
  const { text, images } = requestText(body);
  const writes = cacheWrites(body);
  const tokens = (total: number, output: number, cacheWrite = 0) => ({
    tokens: {
      input: {
        total,
        cacheRead: 0,
        cacheWrite,
        ...(writes === "long" && { cacheWriteLong: cacheWrite }),
      },
      output: { total: output, reasoning: 0 },
      source: "estimated" as const,
    },
  });
  // A prompt that may be written into the cache is held at the write rate, if it is dearer.
  const prices = model.pricing.per_1m_tokens;
  const writeDearer =
    prices !== undefined &&
    writes !== "none" &&
    (writes === "long" ? longCacheWritePrice(prices) : (prices.cache_write ?? 0)) > prices.input;
  const priced = priceUsage(
    model.pricing,
    tokens(input, messagesOutputCap(body, model), writeDearer ? input : 0),
  );
  // The least the prompt costs (a quarter of its characters): charged if the gateway dies.
  const floorTokens = Math.floor(text.length / 4) + images * IMAGE_TOKENS;
  const floor = priceUsage(model.pricing, tokens(floorTokens, 0)).costMicros;
  return { ...priced, floorMicros: Math.min(floor, priced.costMicros) };
}
