/**
 * @module sandbox/image-synth
 * The sandbox's "image model": a real, decodable picture of exactly the requested size and
 * format, drawn from a seed (a gradient, a disc and stripes in seeded colours), so the same
 * prompt and seed always give the same picture. PNG via pngjs, JPEG via jpeg-js, WebP via
 * libwebp compiled to WebAssembly (`@jsquash/webp`, its wasm loaded from node_modules).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import encodeWebp, { init as initWebpEncoder } from "@jsquash/webp/encode.js";
import jpeg from "jpeg-js";
import { PNG } from "pngjs";
import { seededRandom } from "./deterministic-text.ts";

export type SynthFormat = "png" | "jpeg" | "webp";

export interface SynthSpec {
  width: number;
  height: number;
  seed: number;
  /** Transparent background (alpha 0 around the disc); ignored by JPEG. */
  transparent?: boolean;
}

export const MEDIA_TYPES: Record<SynthFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

/** The largest side the sandbox draws (OpenAI's free-form limit). */
export const MAX_SIDE = 3840;
/**
 * The most pixels the sandbox draws in one picture: OpenAI's free-form budget (3840×2160), the
 * largest of the vendors it emulates (Qwen-Image stops at 2048×2048). About 0.75 s of drawing.
 */
export const MAX_PIXELS = 8_294_400;

/** True for a size the sandbox will draw. */
export function canSynthesize(spec: { width: number; height: number }): boolean {
  const { width, height } = spec;
  return (
    Number.isInteger(width) &&
    Number.isInteger(height) &&
    width >= 1 &&
    height >= 1 &&
    width <= MAX_SIDE &&
    height <= MAX_SIDE &&
    width * height <= MAX_PIXELS
  );
}

function colour(next: () => number): [number, number, number] {
  return [Math.floor(next() * 256), Math.floor(next() * 256), Math.floor(next() * 256)];
}

/** RGBA pixels, row by row. */
export function renderPixels(spec: SynthSpec): Uint8Array {
  const { width, height } = spec;
  const next = seededRandom(spec.seed);
  const [top, bottom, disc] = [colour(next), colour(next), colour(next)];
  const cx = width * (0.3 + 0.4 * next());
  const cy = height * (0.3 + 0.4 * next());
  const radius = Math.min(width, height) * (0.2 + 0.15 * next());
  const stripe = 8 + Math.floor(next() * 24);
  const pixels = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const t = height > 1 ? y / (height - 1) : 0;
    const row = top.map((value, index) => Math.round(value + ((bottom[index] ?? 0) - value) * t));
    const dy = (y - cy) * (y - cy);
    for (let x = 0; x < width; x++) {
      const offset = (y * width + x) * 4;
      const inside = (x - cx) * (x - cx) + dy <= radius * radius;
      const shade = Math.floor(x / stripe) % 2 === 0 ? 0 : 24;
      const source = inside ? disc : row;
      pixels[offset] = Math.max(0, (source[0] ?? 0) - shade);
      pixels[offset + 1] = Math.max(0, (source[1] ?? 0) - shade);
      pixels[offset + 2] = Math.max(0, (source[2] ?? 0) - shade);
      pixels[offset + 3] = spec.transparent && !inside ? 0 : 255;
    }
  }
  return pixels;
}

let webpEncoder: Promise<unknown> | undefined;

/** Loads the WebP encoder's wasm from node_modules once (no fetch: this is Node). */
function webpReady(): Promise<unknown> {
  webpEncoder ??= (async () => {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve("@jsquash/webp/package.json"));
    // Node 20 has wasm SIMD, which is the build `init` picks.
    const bytes = await readFile(join(root, "codec/enc/webp_enc_simd.wasm"));
    return initWebpEncoder(await WebAssembly.compile(bytes));
  })();
  return webpEncoder;
}

/** Encodes RGBA pixels; `quality` 0–100 applies to JPEG and WebP. */
export async function encodePixels(
  pixels: Uint8Array,
  width: number,
  height: number,
  format: SynthFormat,
  quality = 80,
): Promise<Buffer> {
  switch (format) {
    case "png": {
      const png = new PNG({ width, height });
      png.data = Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength);
      return PNG.sync.write(png, { colorType: 6 });
    }
    case "jpeg":
      return jpeg.encode({ data: pixels, width, height }, quality).data;
    case "webp": {
      await webpReady();
      const data = new Uint8ClampedArray(pixels);
      const encoded = await encodeWebp({ data, width, height, colorSpace: "srgb" }, { quality });
      return Buffer.from(encoded);
    }
  }
}

export async function synthesize(
  spec: SynthSpec & { format: SynthFormat; quality?: number },
): Promise<Buffer> {
  if (!canSynthesize(spec)) {
    throw new RangeError(`cannot draw a ${spec.width}x${spec.height} image`);
  }
  return encodePixels(renderPixels(spec), spec.width, spec.height, spec.format, spec.quality);
}
