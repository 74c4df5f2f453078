/**
 * @module sandbox/openai-images-request
 * OpenAI Images request rules (pure), for generations (JSON) and edits (form fields + files):
 * models, sizes, qualities, formats, DALL·E 2's single square PNG with transparency, the mask
 * rules; and the token usage GPT-image models report. A broken rule throws `ImagesInvalid`
 * with OpenAI's wording, `param` and `code`.
 */
import { countTokens } from "./deterministic-text.ts";
import { hasAlpha, type ImageFacts, readImageFacts } from "./image-bytes.ts";
import type { SynthFormat } from "./image-synth.ts";

export class ImagesInvalid extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = "invalid_value",
  ) {
    super(message);
  }
}

export interface UploadedFile {
  filename: string;
  bytes: Uint8Array;
}

export interface ImagesRequest {
  model: string;
  gpt: boolean;
  prompt: string;
  n: number;
  width: number;
  height: number;
  /** Native quality as echoed (`auto` resolved to `medium`). */
  quality: string;
  background: "transparent" | "opaque";
  format: SynthFormat;
  responseFormat: "url" | "b64_json";
  /** Visual tokens of the input images (edits). */
  imageTokens: number;
  /** Digest of the input images, for the seed. */
  inputDigest: string;
}

const GPT_SIZES = ["1024x1024", "1536x1024", "1024x1536"];
const DALLE2_SIZES = ["256x256", "512x512", "1024x1024"];

export function isKnownModel(model: string): boolean {
  return model === "dall-e-2" || /^(gpt-image-|chatgpt-image-)/.test(model);
}

function pick(value: unknown, param: string, allowed: readonly string[], fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !allowed.includes(value)) {
    const list = allowed.map((item) => `'${item}'`).join(", ");
    throw new ImagesInvalid(
      `Invalid value: '${String(value)}'. Supported values are: ${list}.`,
      param,
    );
  }
  return value;
}

/** OpenAI's free-form pixel budget: at most 3840×2160 pixels in all. */
export const FREE_FORM_MAX_PIXELS = 8_294_400;

/**
 * OpenAI's free-form rule: multiples of 16, at most 3840 a side, ratio at most 3:1, and at most
 * {@link FREE_FORM_MAX_PIXELS} pixels (so 3840x3840 is refused, 3840x2160 is not).
 */
export function freeFormSize(size: string): { width: number; height: number } | undefined {
  const match = /^(\d{2,4})x(\d{2,4})$/.exec(size);
  if (!match) return undefined;
  const [width, height] = [Number(match[1]), Number(match[2])];
  const ok =
    width % 16 === 0 &&
    height % 16 === 0 &&
    Math.max(width, height) <= 3840 &&
    width * height <= FREE_FORM_MAX_PIXELS &&
    Math.max(width, height) / Math.min(width, height) <= 3;
  return ok ? { width, height } : undefined;
}

/** gpt-image-2 (free-form sizes, no transparent background) and its snapshots. */
const isGptImage2 = (model: string) => model.startsWith("gpt-image-2");

/** An integer field within bounds (a form sends it as text), else OpenAI's 400. */
function checkInteger(value: unknown, param: string, min: number, max: number): void {
  if (value === undefined) return;
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < min || number > max)
    throw new ImagesInvalid(
      `Invalid '${param}': expected an integer between ${min} and ${max}, but got ${JSON.stringify(value)} instead.`,
      param,
    );
}

/** The GPT-image options each model limits (background, fidelity, compression, partials). */
function checkGptOptions(model: string, fields: Record<string, unknown>, edit: boolean): void {
  if (edit && fields.moderation !== undefined)
    throw new ImagesInvalid("Unknown parameter: 'moderation'.", "moderation", "unknown_parameter");
  if (fields.background === "transparent" && isGptImage2(model))
    throw new ImagesInvalid(
      `Transparent background is not supported for ${model}.`,
      "background",
      "unsupported_value",
    );
  if (fields.input_fidelity !== undefined) {
    const fidelities = model.includes("-mini") ? ["low"] : ["high", "low"];
    pick(fields.input_fidelity, "input_fidelity", fidelities, "low");
  }
  checkInteger(fields.output_compression, "output_compression", 0, 100);
  checkInteger(fields.partial_images, "partial_images", 0, 3);
}

function resolveSize(model: string, value: unknown, first: ImageFacts | undefined) {
  const gpt = model !== "dall-e-2";
  if (!gpt) {
    const [w, h] = pick(value, "size", DALLE2_SIZES, "1024x1024").split("x").map(Number);
    return { width: w ?? 1024, height: h ?? 1024 };
  }
  if (value === undefined || value === "auto") {
    if (!first || Math.abs(first.width - first.height) < first.width * 0.1)
      return { width: 1024, height: 1024 };
    return first.width > first.height
      ? { width: 1536, height: 1024 }
      : { width: 1024, height: 1536 };
  }
  // OpenAI takes free-form sizes on gpt-image-2 only (the catalog's `imgmodel` routes send
  // free-form generations there, `free_form_upstream_model`).
  if (!isGptImage2(model)) {
    const [w, h] = pick(value, "size", [...GPT_SIZES, "auto"], "auto")
      .split("x")
      .map(Number);
    return { width: w ?? 1024, height: h ?? 1024 };
  }
  const size = typeof value === "string" ? freeFormSize(value) : undefined;
  if (!size) {
    throw new ImagesInvalid(
      `Invalid size '${String(value)}'. Use 'auto', ${GPT_SIZES.join(", ")}, or WxH with sides multiple of 16, at most 3840 px, at most 8294400 pixels and a ratio of at most 3:1.`,
      "size",
    );
  }
  return size;
}

/** GPT-image visual tokens of one input image: 65 + 129 per 512 px tile after scaling. */
export function inputImageTokens(width: number, height: number): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const shortest = Math.min(width, height) * fit;
  const scale = fit * Math.min(1, 512 / shortest);
  const tiles = Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
  return 65 + 129 * tiles;
}

const OUTPUT_TOKENS: Record<string, Record<string, number>> = {
  low: { "1024x1024": 272, "1024x1536": 408, "1536x1024": 400 },
  medium: { "1024x1024": 1056, "1024x1536": 1584, "1536x1024": 1568 },
  high: { "1024x1024": 4160, "1024x1536": 6240, "1536x1024": 6208 },
};

/** Output tokens of one GPT-image picture (the published table; by area elsewhere). */
export function outputImageTokens(width: number, height: number, quality: string): number {
  const table = OUTPUT_TOKENS[quality] ?? OUTPUT_TOKENS.medium ?? {};
  return (
    table[`${width}x${height}`] ??
    Math.ceil(((table["1024x1024"] ?? 1056) * width * height) / (1024 * 1024))
  );
}

function checkImages(gpt: boolean, images: UploadedFile[], mask: UploadedFile | undefined) {
  if (images.length === 0)
    throw new ImagesInvalid(
      "Missing required parameter: 'image'.",
      "image",
      "missing_required_parameter",
    );
  if (images.length > (gpt ? 16 : 1)) {
    throw new ImagesInvalid(`Too many images: at most ${gpt ? 16 : 1} allowed.`, "image");
  }
  const facts = images.map((image, index) => {
    const read = readImageFacts(image.bytes);
    const allowed = gpt ? ["png", "jpeg", "webp"] : ["png"];
    if (!read || !allowed.includes(read.kind)) {
      const kinds = gpt ? "'png', 'webp', or 'jpeg'" : "'png'";
      throw new ImagesInvalid(
        `Invalid file '${image.filename}': unsupported mimetype ('${read ? `image/${read.kind}` : "application/octet-stream"}'). Supported file formats are ${kinds}.`,
        images.length > 1 ? `image[${index}]` : "image",
        "unsupported_file_mimetype",
      );
    }
    if (!gpt && (read.width !== read.height || image.bytes.length >= 4 * 1024 * 1024))
      throw new ImagesInvalid(
        "Uploaded image must be a PNG and less than 4 MB, and square.",
        "image",
        "invalid_image",
      );
    return read;
  });
  const first = facts[0];
  if (mask) {
    const read = readImageFacts(mask.bytes);
    if (read?.kind !== "png")
      throw new ImagesInvalid(
        "Invalid mask: it must be a PNG image.",
        "mask",
        "invalid_image_format",
      );
    if (read.width !== first?.width || read.height !== first?.height)
      throw new ImagesInvalid(
        "Invalid mask: it must have the same dimensions as the image.",
        "mask",
        "invalid_image",
      );
    if (!hasAlpha(read.mode))
      throw new ImagesInvalid(
        "Invalid mask: it must have an alpha channel.",
        "mask",
        "invalid_image_format",
      );
  } else if (!gpt && !["RGBA", "LA", "L"].includes(first?.mode ?? "")) {
    throw new ImagesInvalid(
      `Invalid input image - format must be in ['RGBA', 'LA', 'L'], got ${first?.mode ?? "unknown"}.`,
      "image",
      "invalid_image_format",
    );
  }
  const imageTokens = gpt
    ? facts.reduce((sum, f) => sum + inputImageTokens(f.width, f.height), 0)
    : 0;
  return { first, imageTokens };
}

/** Validates a generations body, or the fields and files of an edit. */
export function parseImagesRequest(
  fields: Record<string, unknown>,
  edit?: { images: UploadedFile[]; mask?: UploadedFile },
): ImagesRequest {
  const model = fields.model ?? "dall-e-2";
  if (typeof model !== "string" || !isKnownModel(model))
    throw new ImagesInvalid(
      `Invalid value: '${String(model)}'. The model does not exist or you do not have access to it.`,
      "model",
    );
  const gpt = model !== "dall-e-2";
  const prompt = fields.prompt;
  if (typeof prompt !== "string" || prompt === "")
    throw new ImagesInvalid(
      "Missing required parameter: 'prompt'.",
      "prompt",
      "missing_required_parameter",
    );
  if (prompt.length > (gpt ? 32000 : 1000))
    throw new ImagesInvalid(
      `Invalid 'prompt': string too long. Expected a string with maximum length ${gpt ? 32000 : 1000}.`,
      "prompt",
      "string_above_max_length",
    );
  const n = fields.n === undefined ? 1 : Number(fields.n);
  if (!Number.isInteger(n) || n < 1 || n > 10)
    throw new ImagesInvalid("Invalid 'n': must be an integer between 1 and 10.", "n");
  for (const name of gpt
    ? ["response_format"]
    : ["background", "output_format", "output_compression", "moderation", "input_fidelity"]) {
    if (fields[name] !== undefined)
      throw new ImagesInvalid(`Unknown parameter: '${name}'.`, name, "unknown_parameter");
  }
  if (gpt) checkGptOptions(model, fields, edit !== undefined);
  const checked = edit ? checkImages(gpt, edit.images, edit.mask) : undefined;
  const { width, height } = resolveSize(model, fields.size, checked?.first);
  const rawQuality = pick(
    fields.quality,
    "quality",
    gpt ? ["auto", "low", "medium", "high"] : ["standard", "auto"],
    "auto",
  );
  const format = pick(
    fields.output_format,
    "output_format",
    ["png", "jpeg", "webp"],
    "png",
  ) as SynthFormat;
  const background = pick(
    fields.background,
    "background",
    ["transparent", "opaque", "auto"],
    "auto",
  );
  if (background === "transparent" && format === "jpeg")
    throw new ImagesInvalid(
      "Transparent background requires output_format 'png' or 'webp'.",
      "background",
    );
  const responseFormat = pick(
    fields.response_format,
    "response_format",
    ["url", "b64_json"],
    gpt ? "b64_json" : "url",
  );
  const digest = edit ? edit.images.map((image) => image.bytes.length).join(",") : "";
  return {
    model,
    gpt,
    prompt,
    n,
    width,
    height,
    quality: gpt ? (rawQuality === "auto" ? "medium" : rawQuality) : "standard",
    background: background === "transparent" ? "transparent" : "opaque",
    format,
    responseFormat: responseFormat === "url" ? "url" : "b64_json",
    imageTokens: checked?.imageTokens ?? 0,
    inputDigest: digest,
  };
}

/** The `usage` object a GPT-image answer carries. */
export function imagesUsage(request: ImagesRequest) {
  const textTokens = countTokens(request.prompt);
  const input = textTokens + request.imageTokens;
  const output = request.n * outputImageTokens(request.width, request.height, request.quality);
  return {
    input_tokens: input,
    input_tokens_details: { text_tokens: textTokens, image_tokens: request.imageTokens },
    output_tokens: output,
    total_tokens: input + output,
  };
}
