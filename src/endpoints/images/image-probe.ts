/**
 * @module endpoints/images/image-probe
 * What an uploaded file really is, from its bytes and never from its name or declared type: the
 * format by magic number (PNG, JPEG, WebP; GIF and anything else are recognised as not
 * accepted), the dimensions from the header (`image-size`), and for PNG whether it carries
 * transparency (colour type with alpha, or a `tRNS` chunk). Nothing is decoded.
 */
import { imageSize } from "image-size";
import type { ImageFormat } from "../../spec/index.ts";

export type SniffedKind = ImageFormat | "gif" | "bmp" | "tiff" | "unknown";

export interface ProbedImage {
  format: ImageFormat;
  width: number;
  height: number;
  /** PNG only: true when some pixels can be transparent. */
  alpha: boolean;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  return prefix.every((value, index) => bytes[offset + index] === value);
}

export function sniffKind(bytes: Uint8Array): SniffedKind {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8))
    return "webp";
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "gif";
  if (startsWith(bytes, [0x42, 0x4d])) return "bmp";
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a]))
    return "tiff";
  return "unknown";
}

/** A chunk type as the big-endian number of its four ASCII bytes. */
const chunkType = (name: string) =>
  ((name.charCodeAt(0) << 24) |
    (name.charCodeAt(1) << 16) |
    (name.charCodeAt(2) << 8) |
    name.charCodeAt(3)) >>>
  0;
const TRNS = chunkType("tRNS");
const IDAT = chunkType("IDAT");
const IEND = chunkType("IEND");

/**
 * Chunks looked at before the pixels. Real files have a handful; a crafted one of a million
 * empty chunks would otherwise hold the event loop for seconds (security.md rule 4).
 */
const MAX_CHUNKS_BEFORE_PIXELS = 256;

/** True when the PNG's colour type has alpha (4, 6) or a `tRNS` chunk precedes the pixels. */
export function pngHasAlpha(bytes: Uint8Array): boolean {
  const colourType = bytes[25];
  if (colourType === 4 || colourType === 6) return true;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let chunks = 0;
  for (let offset = 8; offset + 8 <= bytes.length && chunks < MAX_CHUNKS_BEFORE_PIXELS; chunks++) {
    const length = view.getUint32(offset);
    const type = view.getUint32(offset + 4);
    if (type === TRNS) return true;
    if (type === IDAT || type === IEND) return false;
    offset += 12 + length;
  }
  return false;
}

export type ProbeResult =
  | { ok: true; image: ProbedImage }
  | { ok: false; kind: SniffedKind; reason: "format" | "unreadable" };

/** Reads the format and size of an upload; `format` failures name what the bytes really are. */
export function probeImage(bytes: Uint8Array): ProbeResult {
  const kind = sniffKind(bytes);
  if (kind !== "png" && kind !== "jpeg" && kind !== "webp") {
    return { ok: false, kind, reason: "format" };
  }
  try {
    const { width, height } = imageSize(bytes);
    if (!width || !height) return { ok: false, kind, reason: "unreadable" };
    return {
      ok: true,
      image: { format: kind, width, height, alpha: kind === "png" && pngHasAlpha(bytes) },
    };
  } catch {
    return { ok: false, kind, reason: "unreadable" };
  }
}

const KIND_NAMES: Record<SniffedKind, string> = {
  png: "PNG",
  jpeg: "JPEG",
  webp: "WebP",
  gif: "GIF",
  bmp: "BMP",
  tiff: "TIFF",
  unknown: "not an image this endpoint can read",
};

export function describeKind(kind: SniffedKind): string {
  return KIND_NAMES[kind];
}
