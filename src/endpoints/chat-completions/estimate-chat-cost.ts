/**
 * @module endpoints/chat-completions/estimate-chat-cost
 * The billing hold of a chat request: the prompt counted with a real tokenizer (with a margin for
 * vendors whose tokenizers split finer), plus the output cap (`max_tokens`, else the model's
 * output limit) for each of the `n` choices asked for, with a thinking budget (`thinking`, which
 * Anthropic spends beside the cap) added up to the model's limit, priced at the catalog's
 * prices. An upper bound, never the charge.
 */
import { type CostEstimate, countTokens, priceUsage } from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { ChatCompletionRequest } from "./schema.ts";

/** Other vendors' tokenizers yield up to ~20% more tokens than o200k for the same text. */
const TOKENIZER_MARGIN = 1.25;
/** Output cap assumed when neither the request nor the catalog gives one. */
export const DEFAULT_OUTPUT_CAP = 4096;
/** Input tokens an image part is held (and, without a vendor's count, billed) at. */
export const IMAGE_TOKENS = 1_600;
export const PER_MESSAGE_OVERHEAD = 4;

function promptText(body: ChatCompletionRequest): { text: string; images: number } {
  const parts: string[] = [];
  let images = 0;
  for (const message of body.messages) {
    const content = "content" in message ? message.content : undefined;
    if (typeof content === "string") parts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part.type === "text") parts.push(part.text);
        else images += 1;
      }
    }
    if (message.role === "assistant" && message.tool_calls)
      parts.push(JSON.stringify(message.tool_calls));
  }
  if (body.tools) parts.push(JSON.stringify(body.tools));
  if (body.response_format) parts.push(JSON.stringify(body.response_format));
  return { text: parts.join("\n"), images };
}

export function outputCap(body: ChatCompletionRequest, model: CatalogModel): number {
  return (
    body.max_completion_tokens ??
    body.max_tokens ??
    model.capabilities?.max_output_tokens ??
    DEFAULT_OUTPUT_CAP
  );
}

/**
 * Output tokens one choice may produce: the cap, plus a thinking budget the vendor spends beside
 * it (Anthropic's `thinking.budget_tokens`, added to `max_tokens` by its adapter), within the
 * model's output limit.
 */
export function outputPerChoice(body: ChatCompletionRequest, model: CatalogModel): number {
  const cap = outputCap(body, model);
  const thinking = body.thinking as { type: string; budget_tokens?: unknown } | undefined;
  const budget =
    thinking?.type === "enabled" && typeof thinking.budget_tokens === "number"
      ? Math.max(0, thinking.budget_tokens)
      : 0;
  if (budget === 0) return cap;
  const limit = model.capabilities?.max_output_tokens;
  return limit === undefined ? cap + budget : Math.max(cap, Math.min(cap + budget, limit));
}

/** The request with an explicit output cap (what is sent upstream, and what the hold covers). */
export function withOutputCap(body: ChatCompletionRequest, cap: number): ChatCompletionRequest {
  // Already explicit (the common case): the body as it is.
  if (
    body.max_completion_tokens === cap ||
    (body.max_completion_tokens === undefined && body.max_tokens === cap)
  )
    return body;
  return body.max_completion_tokens !== undefined
    ? { ...body, max_completion_tokens: cap, max_tokens: undefined }
    : { ...body, max_tokens: cap };
}

/**
 * The least the prompt costs: a quarter of its characters as tokens (a conservative count,
 * with no tokenizing on the request path), charged only if the gateway dies mid-request.
 */
export function inputFloorTokens(characters: number, images: number): number {
  return Math.floor(characters / 4) + images * IMAGE_TOKENS;
}

export async function estimateChatCost(
  body: ChatCompletionRequest,
  model: CatalogModel,
): Promise<CostEstimate> {
  const { text, images } = promptText(body);
  const counted = await countTokens(text);
  const input =
    Math.ceil(counted * TOKENIZER_MARGIN) +
    images * IMAGE_TOKENS +
    body.messages.length * PER_MESSAGE_OVERHEAD;
  // Every choice may fill the cap, and the vendor bills each choice's tokens.
  const output = outputPerChoice(body, model) * (body.n ?? 1);
  const prices = model.pricing.per_1m_tokens;
  // Price the output at whichever is dearer, text or reasoning, so the hold covers both.
  const reasoningDearer = prices?.reasoning !== undefined && prices.reasoning > prices.output;
  const priced = priceUsage(model.pricing, {
    tokens: {
      input: { total: input, cacheRead: 0, cacheWrite: 0 },
      output: { total: output, reasoning: reasoningDearer ? output : 0 },
      source: "estimated",
    },
  });
  // The floor is the priced input line scaled to the floor's token count (no second pricing).
  const inputLine = priced.lineItems.find((item) => item.item === "input")?.costMicros ?? 0;
  const floorMicros =
    input > 0 ? Math.floor((inputLine * inputFloorTokens(text.length, images)) / input) : 0;
  return {
    costMicros: priced.costMicros,
    lineItems: priced.lineItems,
    floorMicros: Math.min(floorMicros, priced.costMicros),
  };
}
