/**
 * @module endpoints/images/image-cost
 * Billing of image requests, as the catalog prices the model: per output image (by size and
 * quality) or per token (GPT-image: prompt text and input images in, picture tokens out). The
 * hold is an upper bound (dearest size and quality when `auto`, margins on counts); the charge
 * is the vendor's report, or the gateway's own count when the vendor reports nothing.
 */
import { countTokens, type PricedUsage, priceUsage } from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import type { ImageResult, ImageSize, ImageTokenUsage, Usage } from "../../spec/index.ts";

/** Other tokenizers and input fidelity may count more than our formulas; the hold covers it. */
const TEXT_MARGIN = 1.25;
const IMAGE_MARGIN = 2;

/** Output tokens of a 1024×1024 picture by quality (GPT-image's published table). */
const SQUARE_OUTPUT_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160 };

export interface ImageJob {
  prompt: string;
  n: number;
  /** Undefined or `auto`: the model picks. */
  size?: ImageSize | "auto";
  /** Native quality; undefined or `auto`: the model picks. */
  quality?: string;
  /** Input images (edits). */
  inputs?: ImageSize[];
  /** How the catalog keys sizes (`1328*1328` for pictor, `1024x1024` for OpenAI). */
  sizeSeparator: "*" | "x";
}

/** GPT-image visual tokens of one input: 65 + 129 per 512 px tile once scaled to fit. */
export function inputImageTokens({ width, height }: ImageSize): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const scale = fit * Math.min(1, 512 / (Math.min(width, height) * fit));
  return 65 + 129 * Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
}

/** Output tokens of one picture, scaled from the square table by area. */
export function outputImageTokens(size: ImageSize, quality: string): number {
  const square = SQUARE_OUTPUT_TOKENS[quality] ?? SQUARE_OUTPUT_TOKENS.high ?? 4160;
  return Math.ceil((square * size.width * size.height) / (1024 * 1024));
}

/** The largest size the model lists (what `auto` may pick). */
function largestListed(model: CatalogModel): ImageSize {
  const sizes = (model.capabilities?.sizes ?? [])
    .map((size) => /^(\d+)[x*](\d+)$/.exec(size))
    .flatMap((match) => (match ? [{ width: Number(match[1]), height: Number(match[2]) }] : []));
  return sizes.reduce(
    (best, size) => (size.width * size.height > best.width * best.height ? size : best),
    { width: 1024, height: 1024 },
  );
}

function sizeKey(size: ImageSize, separator: string): string {
  return `${size.width}${separator}${size.height}`;
}

/** The dearest per-image price of the model's table. */
function dearestImagePrice(model: CatalogModel): number {
  const prices = model.pricing.per_image;
  if (!prices) return 0;
  const all = [
    prices.default,
    ...Object.values(prices.by_size ?? {}),
    ...Object.values(prices.by_size_quality ?? {}).flatMap((byQuality) => Object.values(byQuality)),
  ];
  return Math.max(...all);
}

export async function estimateImageCost(model: CatalogModel, job: ImageJob): Promise<PricedUsage> {
  if (model.pricing.per_1m_tokens) {
    const text = Math.ceil((await countTokens(job.prompt)) * TEXT_MARGIN);
    const images = (job.inputs ?? []).reduce(
      (sum, input) => sum + inputImageTokens(input) * IMAGE_MARGIN,
      0,
    );
    const size = typeof job.size === "object" ? job.size : largestListed(model);
    const quality = job.quality && job.quality !== "auto" ? job.quality : "high";
    return priceUsage(model.pricing, {
      tokens: {
        input: { total: text + images, cacheRead: 0, cacheWrite: 0 },
        output: { total: job.n * outputImageTokens(size, quality), reasoning: 0 },
        source: "estimated",
      },
    });
  }
  const exact = perImageUsage(job, job.n);
  const qualityKnown = job.quality !== undefined && job.quality !== "auto";
  const sizeKnown = typeof job.size === "object";
  const prices = model.pricing.per_image;
  if (!prices || (sizeKnown && (qualityKnown || !prices.by_size_quality))) {
    return priceUsage(model.pricing, exact);
  }
  const price = dearestImagePrice(model);
  return {
    costMicros: price * job.n,
    lineItems: [
      { item: "images", units: job.n, unitPriceMicros: price, per: 1, costMicros: price * job.n },
    ],
  };
}

function perImageUsage(job: ImageJob, count: number, size?: ImageSize): Usage {
  const actual = size ?? (typeof job.size === "object" ? job.size : undefined);
  return {
    media: {
      images: {
        count,
        ...(actual ? { size: sizeKey(actual, job.sizeSeparator) } : {}),
        ...(job.quality && job.quality !== "auto" ? { quality: job.quality } : {}),
      },
      source: "upstream",
    },
  };
}

/** The gateway's own count of a GPT-image call the vendor did not report. */
export async function countImageTokens(
  job: ImageJob,
  pictures: number,
  size: ImageSize,
  quality: string,
): Promise<ImageTokenUsage> {
  const textTokens = await countTokens(job.prompt, { exact: true });
  const imageTokens = (job.inputs ?? []).reduce((sum, input) => sum + inputImageTokens(input), 0);
  return {
    inputTokens: textTokens + imageTokens,
    textTokens,
    imageTokens,
    outputTokens: pictures * outputImageTokens(size, quality),
  };
}

/** What is charged for a finished call, and the token report to show (token-priced models). */
export async function settleImageUsage(
  model: CatalogModel,
  job: ImageJob,
  result: ImageResult,
  size: ImageSize | undefined,
): Promise<{ usage: Usage; tokens?: ImageTokenUsage }> {
  const count = result.images.length;
  if (!model.pricing.per_1m_tokens) return { usage: perImageUsage(job, count, size) };
  const quality =
    result.quality ?? (job.quality && job.quality !== "auto" ? job.quality : "medium");
  const tokens =
    result.tokens ?? (await countImageTokens(job, count, size ?? largestListed(model), quality));
  return {
    tokens,
    usage: {
      tokens: {
        input: { total: tokens.inputTokens, cacheRead: 0, cacheWrite: 0 },
        output: { total: tokens.outputTokens, reasoning: 0 },
        source: result.tokens ? "upstream" : "estimated",
        raw: result.tokens,
      },
    },
  };
}

/** The `usage` object of spec 2.4. */
export function toOpenAIImageUsage(tokens: ImageTokenUsage) {
  return {
    input_tokens: tokens.inputTokens,
    input_tokens_details: { text_tokens: tokens.textTokens, image_tokens: tokens.imageTokens },
    output_tokens: tokens.outputTokens,
    total_tokens: tokens.inputTokens + tokens.outputTokens,
  };
}
