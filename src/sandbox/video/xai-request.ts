/**
 * @module sandbox/video/xai-request
 * Validates an xAI Grok Imagine video request (`POST /v1/videos/generations`, protocol reference
 * §9) and reduces it to the job its task runs. `image` must be an object `{url}` (a bare string
 * is refused: it catches adapters that flatten it); `reference_images` (up to 7 `{url}`) is a
 * separate mode, never combined with `image`; `duration` 1–15; `resolution` `480p`/`720p`, and
 * `1080p` on the 1.5 models, which take an image (image-to-video only). The price per second
 * follows the catalog (`catalog/models/media.yaml`, `gen-video*`).
 */
import { stableHash } from "../deterministic-text.ts";
import {
  FieldError,
  type Fields,
  inlineImageAspect,
  integerIn,
  isObject,
  isUnreachable,
  mediaUrl,
  oneOf,
} from "./video-fields.ts";
import { frameSize, type VideoSpec } from "./video-frames.ts";
import type { TaskFailure } from "./video-tasks.ts";

export type XaiResolution = "480p" | "720p" | "1080p";

interface XaiModel {
  resolutions: readonly XaiResolution[];
  /** Needs `image` (an image-to-video model). */
  needsImage: boolean;
  /** USD per output second at each resolution. */
  usdPerSecond: Partial<Record<XaiResolution, number>>;
}

const IMAGE_MODEL: XaiModel = {
  resolutions: ["480p", "720p", "1080p"],
  needsImage: true,
  usdPerSecond: { "480p": 0.08, "720p": 0.1, "1080p": 0.14 },
};

export const XAI_VIDEO_MODELS: Record<string, XaiModel> = {
  "grok-imagine-video": {
    resolutions: ["480p", "720p"],
    needsImage: false,
    usdPerSecond: { "480p": 0.05, "720p": 0.07 },
  },
  "grok-imagine-video-1.5": IMAGE_MODEL,
  "grok-imagine-video-1.5-preview": IMAGE_MODEL,
};

export const XAI_ASPECT_RATIOS = ["16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3"] as const;
/** Longest prompt, in UTF-8 bytes. */
export const XAI_MAX_PROMPT_BYTES = 4096;
export const XAI_MAX_REFERENCE_IMAGES = 7;
export const XAI_DEFAULT_DURATION = 6;
/** 1 USD in xAI's billing ticks. */
export const TICKS_PER_USD = 10_000_000_000;

export interface XaiJob {
  model: string;
  prompt: string;
  duration: number;
  resolution: XaiResolution;
  costInUsdTicks: number;
  video: VideoSpec;
  lateFailure?: TaskFailure;
}

const LINES: Record<XaiResolution, number> = { "480p": 480, "720p": 720, "1080p": 1080 };

export function isXaiVideoModel(model: string): boolean {
  return Object.hasOwn(XAI_VIDEO_MODELS, model);
}

/** An `{url}` object; a bare string (or anything else) is refused. */
function imageObject(value: unknown, where: string): string {
  if (typeof value === "string") {
    throw new FieldError(
      `${where}: invalid type: string, expected an object {"url": "..."} ` +
        "(a public URL or a base64 data URI)",
    );
  }
  if (!isObject(value)) throw new FieldError(`${where}: expected an object {"url": "..."}`);
  return mediaUrl(value.url, `${where}.url`);
}

function readPrompt(body: Fields): string {
  const prompt = body.prompt;
  if (prompt === undefined || prompt === null) throw new FieldError("Field required: prompt");
  if (typeof prompt !== "string") throw new FieldError("Input should be a valid string: prompt");
  if (prompt.trim() === "") throw new FieldError("String should have at least 1 character: prompt");
  if (Buffer.byteLength(prompt, "utf8") > XAI_MAX_PROMPT_BYTES) {
    throw new FieldError(`Prompt is longer than ${XAI_MAX_PROMPT_BYTES} bytes: prompt`);
  }
  return prompt;
}

function readReferences(body: Fields): string[] {
  const references = body.reference_images;
  if (references === undefined || references === null) return [];
  if (!Array.isArray(references))
    throw new FieldError("Input should be a valid list: reference_images");
  if (references.length < 1 || references.length > XAI_MAX_REFERENCE_IMAGES) {
    throw new FieldError(
      `List should have 1 to ${XAI_MAX_REFERENCE_IMAGES} items: reference_images`,
    );
  }
  return references.map((item, index) => imageObject(item, `reference_images.${index}`));
}

/** The job of a request to `model` (a known one); throws {@link FieldError} when refused. */
export function parseXaiRequest(model: string, body: Fields): XaiJob {
  const spec = XAI_VIDEO_MODELS[model];
  if (!spec) throw new FieldError(`Unknown model ${model}`);
  const prompt = readPrompt(body);
  const hasImage = body.image !== undefined && body.image !== null;
  const image = hasImage ? imageObject(body.image, "image") : undefined;
  const references = readReferences(body);
  if (image !== undefined && references.length > 0) {
    throw new FieldError("image and reference_images cannot be used together");
  }
  if (spec.needsImage && image === undefined) {
    throw new FieldError(`Model ${model} generates video from an image: image is required`);
  }
  const duration =
    integerIn(body, "duration", "duration", { min: 1, max: 15, fallback: XAI_DEFAULT_DURATION }) ??
    XAI_DEFAULT_DURATION;
  const resolution = oneOf(body, "resolution", "resolution", spec.resolutions, "480p");
  const requested = oneOf(body, "aspect_ratio", "aspect_ratio", XAI_ASPECT_RATIOS, "16:9");
  // Image-to-video follows the image's shape (when it can be read from a data URI).
  const imageAspect = image === undefined ? undefined : inlineImageAspect(image);
  const [ratioWidth, ratioHeight] = requested.split(":").map(Number);
  const aspect = imageAspect ?? (ratioWidth ?? 16) / (ratioHeight ?? 9);
  const media = image === undefined ? references : [image];
  const seed = stableHash(
    [model, prompt, String(duration), resolution, requested, ...media].join("\n"),
  );
  const frame = frameSize(LINES[resolution], Math.round(aspect * 1000), 1000);
  const usdPerSecond = spec.usdPerSecond[resolution] ?? 0;
  const lateFailure: TaskFailure | undefined = media.some(isUnreachable)
    ? {
        code: "invalid_argument",
        message: "Failed to fetch the image from its url.",
        onStart: true,
      }
    : undefined;
  return {
    model,
    prompt,
    duration,
    resolution,
    costInUsdTicks: Math.round(usdPerSecond * duration * TICKS_PER_USD),
    video: { ...frame, seconds: duration, seed },
    ...(lateFailure ? { lateFailure } : {}),
  };
}
