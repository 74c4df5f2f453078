/**
 * @module sandbox/video/video-fields
 * Field readers shared by the video request parsers. Each throws {@link FieldError} with a
 * message in the style of the one DashScope video message the reference quotes
 * (`Field required: input.media`): what is wrong, a colon, where. Also: media links (a public
 * http(s) URL or a base64 data URI; hosts under `.invalid` stand for unreachable ones) and the
 * aspect of an image sent inline.
 */
import { readImageFacts } from "../image-bytes.ts";

export class FieldError extends Error {
  /** The vendor's error code (DashScope; xAI has one code for every refused field). */
  constructor(
    message: string,
    readonly code = "InvalidParameter",
  ) {
    super(message);
  }
}

export type Fields = Record<string, unknown>;

export function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object at `key` (an absent one reads as empty); anything else is refused. */
export function objectAt(fields: Fields, key: string, where: string): Fields {
  const value = fields[key];
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new FieldError(`Input should be a valid dictionary: ${where}`);
  return value;
}

export function optionalString(
  fields: Fields,
  key: string,
  where: string,
  maxLength: number,
): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new FieldError(`Input should be a valid string: ${where}`);
  if (value.length > maxLength) {
    throw new FieldError(`String should have at most ${maxLength} characters: ${where}`);
  }
  return value;
}

export function requiredString(
  fields: Fields,
  key: string,
  where: string,
  maxLength: number,
): string {
  const value = optionalString(fields, key, where, maxLength);
  if (value === undefined) throw new FieldError(`Field required: ${where}`);
  if (value.trim() === "")
    throw new FieldError(`String should have at least 1 character: ${where}`);
  return value;
}

export function optionalBoolean(fields: Fields, key: string, where: string): boolean | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new FieldError(`Input should be a valid boolean: ${where}`);
  return value;
}

/** An integer in `[min, max]`, or `fallback` when absent. */
export function integerIn(
  fields: Fields,
  key: string,
  where: string,
  range: { min: number; max: number; fallback?: number },
): number | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return range.fallback;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new FieldError(`Input should be a valid integer: ${where}`);
  }
  if (value < range.min || value > range.max) {
    throw new FieldError(`Input should be between ${range.min} and ${range.max}: ${where}`);
  }
  return value;
}

/** One of `allowed` (exact spelling), or `fallback` when absent. */
export function oneOf<T extends string>(
  fields: Fields,
  key: string,
  where: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = fields[key];
  if (value === undefined || value === null) return fallback;
  const found = allowed.find((option) => option === value);
  if (found === undefined) {
    const list = allowed.map((option) => `'${option}'`).join(", ");
    throw new FieldError(`Input should be one of ${list}: ${where}`);
  }
  return found;
}

const DATA_URI = /^data:[a-z]+\/[\w.+-]+;base64,/i;

/** A media link: an http(s) URL or a base64 data URI. */
export function mediaUrl(value: unknown, where: string): string {
  if (value === undefined || value === null) throw new FieldError(`Field required: ${where}`);
  if (typeof value !== "string") throw new FieldError(`Input should be a valid string: ${where}`);
  if (DATA_URI.test(value)) return value;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new FieldError(`url error, please check url！: ${where}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new FieldError(`url error, please check url！: ${where}`);
  }
  return value;
}

/** True for a link the vendor could not download (the sandbox's stand-in: `*.invalid`). */
export function isUnreachable(url: string): boolean {
  if (url.startsWith("data:")) return false;
  try {
    return new URL(url).hostname.endsWith(".invalid");
  } catch {
    return true;
  }
}

/** True for a link that names a video file (by its extension; inputs are not downloaded). */
export function looksLikeVideo(url: string): boolean {
  if (url.startsWith("data:")) return /^data:video\//i.test(url);
  return /\.(mp4|mov|webm|mkv|avi)$/i.test(url.split(/[?#]/)[0] ?? "");
}

/** Base64 characters read to find an inline image's size (64 KiB of image). */
const HEADER_CHARS = 87_384;

/** The size of an image sent as a data URI, when its header can be read. */
export function inlineImageSize(url: string): { width: number; height: number } | undefined {
  const comma = url.indexOf(",");
  if (!url.startsWith("data:image/") || comma === -1) return undefined;
  const bytes = Buffer.from(url.slice(comma + 1, comma + 1 + HEADER_CHARS), "base64");
  const facts = readImageFacts(bytes);
  return facts && facts.width > 0 && facts.height > 0
    ? { width: facts.width, height: facts.height }
    : undefined;
}

/** Width / height of an image sent as a data URI, when its header can be read. */
export function inlineImageAspect(url: string): number | undefined {
  const size = inlineImageSize(url);
  return size ? size.width / size.height : undefined;
}

/** The pixel limits a model sets on its input images: sides, and the longest to shortest. */
export interface ImageLimits {
  minSide: number;
  maxSide: number;
  maxAspect?: number;
}

/** Refuses an inline image (a data URI) outside `limits`; a link is not downloaded. */
export function checkInlineImage(url: string, limits: ImageLimits, where: string): void {
  const size = inlineImageSize(url);
  if (!size) return;
  const { width, height } = size;
  const sides = [width, height];
  if (sides.some((side) => side < limits.minSide || side > limits.maxSide))
    throw new FieldError(
      `The image is ${width}x${height}; each side must be ${limits.minSide} to ${limits.maxSide} pixels: ${where}`,
    );
  const aspect = Math.max(width, height) / Math.min(width, height);
  if (limits.maxAspect !== undefined && aspect > limits.maxAspect)
    throw new FieldError(
      `The image is ${width}x${height}; its aspect ratio must be between 1:${limits.maxAspect} and ${limits.maxAspect}:1: ${where}`,
    );
}
