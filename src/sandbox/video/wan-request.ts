/**
 * @module sandbox/video/wan-request
 * Validates a Wan video-synthesis request by model version and mode (protocol reference §3.1–
 * §3.3) and reduces it to the job the task will run: prompt, duration, tier, ratio, size and the
 * input videos counted in usage. Errors the vendor reports at once throw {@link FieldError};
 * those it finds only once the task runs (wan2.7-i2v without `input.media`, a link it cannot
 * download) are returned as the job's `lateFailure`, to end the accepted task FAILED.
 */

import {
  checkInlineImage,
  FieldError,
  type Fields,
  inlineImageAspect,
  integerIn,
  isObject,
  isUnreachable,
  looksLikeVideo,
  mediaUrl,
  objectAt,
  oneOf,
  optionalBoolean,
  optionalString,
  requiredString,
} from "./video-fields.ts";
import type { TaskFailure } from "./video-tasks.ts";
import {
  DEFAULT_SIZE,
  I2V_COMBINATIONS,
  I2V_MEDIA_TYPES,
  INPUT_VIDEO_SECONDS,
  nearestSize,
  R2V_MAX_REFERENCE_URLS,
  R2V_MAX_REFERENCES,
  R2V_MEDIA_TYPES,
  RATIOS,
  SIZES,
  sizeFor,
  TIER_NAMES,
  type Tier,
  tierOfSize,
  type WanModel,
} from "./wan-models.ts";

export interface WanJob {
  model: WanModel;
  prompt?: string;
  negativePrompt?: string;
  promptExtend: boolean;
  seed?: number;
  /** Output seconds. */
  duration: number;
  tier: Tier;
  /** Aspect ratio, e.g. `16:9`. */
  ratio: string;
  /** Output size, e.g. `1920*1080`. */
  size: string;
  /** Seconds of input video counted in usage. */
  inputVideoSeconds: number;
  /** Every media link of the request, in order. */
  media: string[];
  lateFailure?: TaskFailure;
}

interface Shape {
  tier: Tier;
  size: string;
  ratio: string;
}

interface MediaItem {
  type: string;
  url: string;
  voice?: string;
}

const MAX_NEGATIVE_PROMPT = 500;
const SEED_MAX = 2_147_483_647;

export const DOWNLOAD_FAILURE: TaskFailure = {
  code: "InvalidParameter",
  message: "<400> InternalError.Algo.InvalidParameter: Failed to download multimodal content",
  onStart: true,
};

function shapeOf(tier: Tier, size: string): Shape {
  return { tier, size, ratio: SIZES[tier][size] ?? "16:9" };
}

/** `parameters.size`: one of the listed sizes of the allowed tiers. */
function readSize(parameters: Fields, tiers: readonly Tier[]): Shape {
  const allowed = tiers.flatMap((tier) => Object.keys(SIZES[tier]));
  const size = oneOf(parameters, "size", "parameters.size", allowed, DEFAULT_SIZE);
  return shapeOf(tierOfSize(size) ?? 1080, size);
}

/** `parameters.resolution`: upper-case `720P` style, one of the allowed tiers. */
function readTier(parameters: Fields, tiers: readonly Tier[]): Tier {
  const names = Object.entries(TIER_NAMES)
    .filter(([, tier]) => tiers.includes(tier))
    .map(([name]) => name);
  const name = oneOf(parameters, "resolution", "parameters.resolution", names, "1080P");
  return TIER_NAMES[name] ?? 1080;
}

/** The input image limits of Wan 2.5 (`img_url`, §3.1) and 2.7 (`input.media`, §3.3). */
const WAN25_IMAGE = { minSide: 360, maxSide: 2000 };
const WAN27_IMAGE = { minSide: 240, maxSide: 8000, maxAspect: 8 };
/** The `input.media` types that are images. */
const IMAGE_MEDIA = new Set(["first_frame", "last_frame", "reference_image"]);

/** The output shape of a video that follows its first image (16:9 when it cannot be read). */
function followImage(tier: Tier, image: string | undefined): Shape {
  const aspect = image === undefined ? undefined : inlineImageAspect(image);
  return shapeOf(tier, aspect === undefined ? sizeFor(tier, "16:9") : nearestSize(tier, aspect));
}

function readDuration(parameters: Fields, version: string, maxSeconds: number): number {
  const where = "parameters.duration";
  if (version === "2.5") {
    const seconds = integerIn(parameters, "duration", where, { min: 1, max: 60, fallback: 5 });
    if (seconds !== 5 && seconds !== 10) throw new FieldError(`Input should be 5 or 10: ${where}`);
    return seconds;
  }
  return integerIn(parameters, "duration", where, { min: 2, max: maxSeconds, fallback: 5 }) ?? 5;
}

function readShotType(parameters: Fields, promptExtend: boolean): void {
  const where = "parameters.shot_type";
  const shot = oneOf(parameters, "shot_type", where, ["single", "multi"], "single");
  if (shot === "multi" && !promptExtend) {
    throw new FieldError(`shot_type 'multi' requires prompt_extend to be true: ${where}`);
  }
}

function readMedia(input: Fields, types: readonly string[]): MediaItem[] {
  const media = input.media;
  if (!Array.isArray(media)) throw new FieldError("Input should be a valid list: input.media");
  if (media.length === 0) throw new FieldError("List should have at least 1 item: input.media");
  return media.map((item, index) => {
    const where = `input.media.${index}`;
    if (!isObject(item)) throw new FieldError(`Input should be a valid dictionary: ${where}`);
    const type = oneOf(item, "type", `${where}.type`, types, "" as string);
    if (type === "") throw new FieldError(`Field required: ${where}.type`);
    const url = mediaUrl(item.url, `${where}.url`);
    if (IMAGE_MEDIA.has(type)) checkInlineImage(url, WAN27_IMAGE, `${where}.url`);
    const voice =
      item.reference_voice === undefined
        ? undefined
        : mediaUrl(item.reference_voice, `${where}.reference_voice`);
    if (voice !== undefined && type !== "reference_image") {
      throw new FieldError(`reference_voice is only allowed on reference_image: ${where}`);
    }
    return { type, url, ...(voice === undefined ? {} : { voice }) };
  });
}

function readI2vMedia(input: Fields): MediaItem[] {
  const items = readMedia(input, I2V_MEDIA_TYPES);
  const types = items.map((item) => item.type).sort();
  const valid = I2V_COMBINATIONS.some(
    (combination) =>
      combination.length === types.length &&
      [...combination].sort().every((type, index) => type === types[index]),
  );
  if (!valid) {
    throw new FieldError(
      `The combination of media types [${items.map((item) => item.type).join(", ")}] is not ` +
        `supported: input.media`,
    );
  }
  return items;
}

function readR2vMedia(input: Fields): MediaItem[] {
  const items = readMedia(input, R2V_MEDIA_TYPES);
  const references = items.filter((item) => item.type !== "first_frame").length;
  if (items.length - references > 1) {
    throw new FieldError("At most one first_frame is allowed: input.media");
  }
  if (references < 1) {
    throw new FieldError(
      "At least one reference_image or reference_video is required: input.media",
    );
  }
  if (references > R2V_MAX_REFERENCES) {
    throw new FieldError(
      `At most ${R2V_MAX_REFERENCES} reference_image and reference_video items are allowed: input.media`,
    );
  }
  return items;
}

function readReferenceUrls(input: Fields): string[] {
  const where = "input.reference_urls";
  const urls = input.reference_urls;
  if (urls === undefined || urls === null) throw new FieldError(`Field required: ${where}`);
  if (!Array.isArray(urls)) throw new FieldError(`Input should be a valid list: ${where}`);
  if (urls.length < 1 || urls.length > R2V_MAX_REFERENCE_URLS) {
    throw new FieldError(`List should have 1 to ${R2V_MAX_REFERENCE_URLS} items: ${where}`);
  }
  return urls.map((url, index) => mediaUrl(url, `${where}.${index}`));
}

interface ModeResult {
  shape: Shape;
  duration: number;
  media: string[];
  inputVideos: number;
  lateFailure?: TaskFailure;
}

function readMode(model: WanModel, input: Fields, parameters: Fields, extend: boolean): ModeResult {
  const { version, mode } = model;
  const mediaLinks = (items: MediaItem[]) =>
    items.flatMap((item) => (item.voice ? [item.url, item.voice] : [item.url]));
  if (version === "2.5" || version === "2.6") {
    if (version === "2.6") readShotType(parameters, extend);
    const tiers: Tier[] = version === "2.5" ? [480, 720, 1080] : [720, 1080];
    const audio =
      input.audio_url === undefined ? [] : [mediaUrl(input.audio_url, "input.audio_url")];
    if (mode === "t2v") {
      const shape = readSize(parameters, tiers);
      return {
        shape,
        duration: readDuration(parameters, version, 15),
        media: audio,
        inputVideos: 0,
      };
    }
    if (mode === "i2v") {
      const image = mediaUrl(input.img_url, "input.img_url");
      if (version === "2.5") checkInlineImage(image, WAN25_IMAGE, "input.img_url");
      const shape = followImage(readTier(parameters, tiers), image);
      const duration = readDuration(parameters, version, 15);
      return { shape, duration, media: [image, ...audio], inputVideos: 0 };
    }
    const references = readReferenceUrls(input);
    const shape = readSize(parameters, tiers);
    const inputVideos = references.filter(looksLikeVideo).length;
    return {
      shape,
      duration: readDuration(parameters, version, 10),
      media: references,
      inputVideos,
    };
  }
  const tier = readTier(parameters, [720, 1080]);
  if (mode === "t2v") {
    const ratio = oneOf(parameters, "ratio", "parameters.ratio", RATIOS, "16:9");
    const audio =
      input.audio_url === undefined ? [] : [mediaUrl(input.audio_url, "input.audio_url")];
    const shape = shapeOf(tier, sizeFor(tier, ratio));
    return { shape, duration: readDuration(parameters, version, 15), media: audio, inputVideos: 0 };
  }
  if (mode === "i2v") {
    const duration = readDuration(parameters, version, 15);
    if (input.media === undefined || input.media === null) {
      // The vendor accepts this (e.g. a 2.6-style `img_url`) and fails the task later (§3.3).
      const failure = { code: "InvalidParameter", message: "Field required: input.media" };
      return {
        shape: shapeOf(tier, sizeFor(tier, "16:9")),
        duration,
        media: [],
        inputVideos: 0,
        lateFailure: { ...failure, onStart: true },
      };
    }
    const items = readI2vMedia(input);
    const first = items.find((item) => item.type === "first_frame")?.url;
    const inputVideos = items.filter((item) => item.type === "first_clip").length;
    return { shape: followImage(tier, first), duration, media: mediaLinks(items), inputVideos };
  }
  if (parameters.shot_type !== undefined) readShotType(parameters, extend);
  const items = readR2vMedia(input);
  const inputVideos = items.filter((item) => item.type === "reference_video").length;
  const duration = readDuration(parameters, version, inputVideos > 0 ? 10 : 15);
  const ratio = oneOf(parameters, "ratio", "parameters.ratio", RATIOS, "16:9");
  const first = items.find((item) => item.type === "first_frame")?.url;
  const shape = first ? followImage(tier, first) : shapeOf(tier, sizeFor(tier, ratio));
  return { shape, duration, media: mediaLinks(items), inputVideos };
}

/** The job of a request to `model`; throws {@link FieldError} for what the vendor refuses. */
export function parseWanRequest(model: WanModel, body: Fields): WanJob {
  if (body.input === undefined || body.input === null) {
    throw new FieldError("Required input parameter missing from request.", "BadRequest.EmptyInput");
  }
  if (!isObject(body.input)) throw new FieldError("Input should be a valid dictionary: input");
  const input = body.input;
  const parameters = objectAt(body, "parameters", "parameters");
  const maxPrompt = model.version === "2.7" ? 5000 : 2000;
  const prompt =
    model.mode === "i2v"
      ? optionalString(input, "prompt", "input.prompt", maxPrompt)
      : requiredString(input, "prompt", "input.prompt", maxPrompt);
  const where = "input.negative_prompt";
  const negativePrompt = optionalString(input, "negative_prompt", where, MAX_NEGATIVE_PROMPT);
  const promptExtend =
    optionalBoolean(parameters, "prompt_extend", "parameters.prompt_extend") ?? true;
  optionalBoolean(parameters, "watermark", "parameters.watermark");
  optionalBoolean(parameters, "audio", "parameters.audio");
  const seed = integerIn(parameters, "seed", "parameters.seed", { min: 0, max: SEED_MAX });
  const mode = readMode(model, input, parameters, promptExtend);
  const unreachable = mode.media.some(isUnreachable);
  const lateFailure = mode.lateFailure ?? (unreachable ? DOWNLOAD_FAILURE : undefined);
  return {
    model,
    ...(prompt === undefined ? {} : { prompt }),
    ...(negativePrompt === undefined ? {} : { negativePrompt }),
    promptExtend,
    ...(seed === undefined ? {} : { seed }),
    duration: mode.duration,
    tier: mode.shape.tier,
    ratio: mode.shape.ratio,
    size: mode.shape.size,
    inputVideoSeconds: mode.inputVideos * INPUT_VIDEO_SECONDS,
    media: mode.media,
    ...(lateFailure ? { lateFailure } : {}),
  };
}
