/**
 * @module test/support/image-fixtures
 * Small real images for image tests: PNG (with or without alpha), JPEG and GIF bytes, and a
 * reader of what comes back (format and size from the bytes).
 */
import { imageSize } from "image-size";
import jpeg from "jpeg-js";
import { PNG } from "pngjs";

export function pngBytes(width: number, height: number, options: { alpha?: boolean } = {}): Buffer {
  const png = new PNG({ width, height, colorType: options.alpha ? 6 : 2 });
  for (let i = 0; i < width * height; i++) {
    png.data[i * 4] = (i * 7) % 256;
    png.data[i * 4 + 1] = 120;
    png.data[i * 4 + 2] = 200;
    // With alpha, the left half is fully transparent (the area to edit).
    png.data[i * 4 + 3] = options.alpha && i % width < width / 2 ? 0 : 255;
  }
  return PNG.sync.write(png, {
    colorType: options.alpha ? 6 : 2,
    inputHasAlpha: true,
  });
}

export function jpegBytes(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4, 128);
  return jpeg.encode({ data, width, height }, 80).data;
}

/** A 1x1 GIF89a. */
export const GIF_BYTES = Buffer.from(
  "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
  "base64",
);

export function describeImage(bytes: Uint8Array): { type?: string; width: number; height: number } {
  const { type, width, height } = imageSize(bytes);
  return { type, width, height };
}
