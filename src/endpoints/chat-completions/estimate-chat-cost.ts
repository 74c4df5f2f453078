/**
 * @module endpoints/chat-completions/estimate-chat-cost
 * The billing hold of a chat request: the prompt counted with a real tokenizer (with a margin for
 * vendors whose tokenizers split finer), plus the output cap (`max_tokens`, else the model's
 * output limit), priced at the catalog's prices. An upper bound, never the charge.
 */
import { countTokens, type PricedUsage, priceUsage } from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { ChatCompletionRequest } from "./schema.ts";

/** Other vendors' tokenizers yield up to ~20% more tokens than o200k for the same text. */
const TOKENIZER_MARGIN = 1.25;
/** Output cap assumed when neither the request nor the catalog gives one. */
export const DEFAULT_OUTPUT_CAP = 4096;
const IMAGE_TOKENS = 1_600;
const PER_MESSAGE_OVERHEAD = 4;

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

export async function estimateChatCost(
  body: ChatCompletionRequest,
  model: CatalogModel,
): Promise<PricedUsage> {
  const { text, images } = promptText(body);
  const counted = await countTokens(text);
  const input =
    Math.ceil(counted * TOKENIZER_MARGIN) +
    images * IMAGE_TOKENS +
    body.messages.length * PER_MESSAGE_OVERHEAD;
  const output = outputCap(body, model);
  const prices = model.pricing.per_1m_tokens;
  // Price the output at whichever is dearer, text or reasoning, so the hold covers both.
  const reasoningDearer = prices?.reasoning !== undefined && prices.reasoning > prices.output;
  return priceUsage(model.pricing, {
    tokens: {
      input: { total: input, cacheRead: 0, cacheWrite: 0 },
      output: { total: output, reasoning: reasoningDearer ? output : 0 },
      source: "estimated",
    },
  });
}
