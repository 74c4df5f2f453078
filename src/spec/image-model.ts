/**
 * @module spec/image-model
 * The image capability: text-to-image generation (with optional reference images by URL) and
 * editing of uploaded images (with an optional mask). Sizes are numbers here; each adapter writes
 * them the way its vendor does (`1328*1328` for DashScope, `1024x1536` for OpenAI).
 */
import type { CallSignal } from "./call-signal.ts";
import type { CallWarning } from "./warning.ts";

export type ImageFormat = "png" | "jpeg" | "webp";

export interface ImageSize {
  width: number;
  height: number;
}

/** Options every image call may carry; an adapter sends only what its vendor understands. */
export interface ImageCallCommon {
  upstreamModel: string;
  prompt: string;
  /** Images to produce. */
  n: number;
  /** Absent: the vendor's default (or `auto` where the vendor has one). */
  size?: ImageSize | "auto";
  /** Native quality (`low`, `medium`, `high`, `auto`, `standard`); aliases are mapped before. */
  quality?: string;
  background?: "transparent" | "opaque" | "auto";
  outputFormat?: ImageFormat;
  /** 0–100, for `jpeg` and `webp` output. */
  outputCompression?: number;
  /** `url` only where the vendor still offers links (DALL·E 2). */
  responseFormat?: "url" | "b64_json";
  user?: string;
  abortSignal?: CallSignal;
}

export interface ImageGenerationOptions extends ImageCallCommon {
  /** Reference images by public URL (DashScope editing models); empty for text to image. */
  referenceUrls?: string[];
  seed?: number;
  watermark?: boolean;
  negativePrompt?: string;
  promptExtend?: boolean;
  /** OpenAI's content moderation level (`auto`, `low`). */
  moderation?: string;
}

/** An uploaded image whose format and dimensions were read from its bytes. */
export interface ImageUpload {
  bytes: Uint8Array;
  filename: string;
  format: ImageFormat;
  width: number;
  height: number;
}

export interface ImageEditOptions extends ImageCallCommon {
  images: ImageUpload[];
  /** PNG whose transparent pixels mark the area to edit; same size as the first image. */
  mask?: ImageUpload;
  /** How closely GPT-image keeps the input's details (`high`, `low`). */
  inputFidelity?: "high" | "low";
}

export interface GeneratedImage {
  /** A link to the image (time-limited at the vendor). */
  url?: string;
  /** The image itself, base64. */
  b64Json?: string;
  revisedPrompt?: string;
}

/** Token usage of a token-billed image call, as the vendor reported it. */
export interface ImageTokenUsage {
  inputTokens: number;
  /** Of `inputTokens`: prompt text. */
  textTokens: number;
  /** Of `inputTokens`: visual tokens of the input images. */
  imageTokens: number;
  outputTokens: number;
}

export interface ImageResult {
  images: GeneratedImage[];
  /** Unix seconds, when the vendor says. */
  created?: number;
  /** Dimensions of the output, when the vendor reports them. */
  width?: number;
  height?: number;
  /** Echoed settings of the output (OpenAI reports them). */
  size?: string;
  quality?: string;
  background?: string;
  outputFormat?: string;
  /** Undefined when the vendor reports no token usage (per-image vendors, or a missing report). */
  tokens?: ImageTokenUsage;
  upstreamRequestId?: string;
  warnings: CallWarning[];
}

export interface ImageModel {
  readonly specificationVersion: "switchyard-image-1";
  readonly provider: string;
  doGenerate(options: ImageGenerationOptions): Promise<ImageResult>;
  /** Absent when the vendor protocol has no edit operation for uploads. */
  doEdit?(options: ImageEditOptions): Promise<ImageResult>;
}
