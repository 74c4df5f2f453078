/**
 * @module sandbox/image-bytes
 * What an uploaded file really is, read from its bytes as a vendor does (never from its name):
 * the format by magic number, the dimensions from the header (`image-size`), and for PNG the
 * colour mode (`RGBA`, `RGB`, `LA`, `L`, `P`), which DALL·E 2's transparency rule needs.
 */
import { imageSize } from "image-size";

export type ImageKind = "png" | "jpeg" | "webp" | "gif" | "unknown";

export interface ImageFacts {
  kind: ImageKind;
  width: number;
  height: number;
  /** PNG only: the colour mode, as PIL names it (what OpenAI's error messages show). */
  mode?: string;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  return prefix.every((value, index) => bytes[offset + index] === value);
}

export function sniffKind(bytes: Uint8Array): ImageKind {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8))
    return "webp";
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "gif";
  return "unknown";
}

const PNG_MODES: Record<number, string> = { 0: "L", 2: "RGB", 3: "P", 4: "LA", 6: "RGBA" };

/** PNG colour mode from IHDR; a `tRNS` chunk gives RGB/L/P transparency (reported as `…A`). */
function pngMode(bytes: Uint8Array): string | undefined {
  const colourType = bytes[25];
  if (colourType === undefined) return undefined;
  const base = PNG_MODES[colourType];
  if (!base || base.endsWith("A")) return base;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 8; offset + 8 <= bytes.length; ) {
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    if (type === "tRNS") return base === "P" ? "PA" : `${base}A`;
    if (type === "IDAT" || type === "IEND") break;
    offset += 12 + length;
  }
  return base;
}

/** Facts about the file, or undefined when it is no readable image. */
export function readImageFacts(bytes: Uint8Array): ImageFacts | undefined {
  const kind = sniffKind(bytes);
  if (kind === "unknown") return undefined;
  try {
    const { width, height } = imageSize(bytes);
    if (!width || !height) return undefined;
    return { kind, width, height, ...(kind === "png" ? { mode: pngMode(bytes) } : {}) };
  } catch {
    return undefined;
  }
}

/** True when the PNG mode carries transparency. */
export function hasAlpha(mode: string | undefined): boolean {
  return mode?.endsWith("A") === true;
}
