/**
 * @module sandbox/video/video-frames
 * The sandbox's "video model": a real, small MP4 drawn from a seed. One JPEG frame per second
 * (so the file lasts exactly the requested duration): a seeded gradient, a disc that travels
 * across the picture and a progress bar filling along the bottom, so every frame differs and the
 * same request always gives the same bytes. Frames are at most {@link MAX_FRAME_SIDE} pixels a
 * side, in the aspect ratio of the requested video.
 */
import { seededRandom } from "../deterministic-text.ts";
import { encodePixels } from "../image-synth.ts";
import { muxMotionJpeg } from "./mp4-mux.ts";

export interface VideoSpec {
  width: number;
  height: number;
  /** Whole seconds; one frame each. */
  seconds: number;
  seed: number;
}

/** Longest side of a frame: the files stay a few kilobytes per second. */
export const MAX_FRAME_SIDE = 320;
/** Longest video the sandbox draws (both vendors stop at 15 s). */
export const MAX_VIDEO_SECONDS = 15;
/** Longest side of the frames for each output resolution (shorter side: by aspect ratio). */
export const FRAME_SIDE: Record<string, number> = { 480: 192, 720: 256, 1080: 320 };

/**
 * The frame size of a video of `resolution` lines (480, 720 or 1080) whose shape is
 * `aspectWidth:aspectHeight`: the long side from {@link FRAME_SIDE}, the short side rounded to
 * an even number.
 */
export function frameSize(
  resolution: number,
  aspectWidth: number,
  aspectHeight: number,
): { width: number; height: number } {
  const long = FRAME_SIDE[resolution] ?? MAX_FRAME_SIDE;
  const shape = Math.min(aspectWidth, aspectHeight) / Math.max(aspectWidth, aspectHeight);
  const short = Math.max(2, 2 * Math.round((long * shape) / 2));
  return aspectWidth >= aspectHeight
    ? { width: long, height: short }
    : { width: short, height: long };
}

export function canRender(spec: VideoSpec): boolean {
  const { width, height, seconds } = spec;
  return (
    [width, height, seconds].every(Number.isInteger) &&
    width >= 2 &&
    height >= 2 &&
    width <= MAX_FRAME_SIDE &&
    height <= MAX_FRAME_SIDE &&
    seconds >= 1 &&
    seconds <= MAX_VIDEO_SECONDS
  );
}

type Rgb = [number, number, number];

function colour(next: () => number): Rgb {
  return [Math.floor(next() * 256), Math.floor(next() * 256), Math.floor(next() * 256)];
}

/** RGBA pixels of frame `index` (0-based) of `count`. */
export function renderFrame(spec: VideoSpec, index: number, count: number): Uint8Array {
  const { width, height } = spec;
  const next = seededRandom(spec.seed);
  const [top, bottom, disc, bar] = [colour(next), colour(next), colour(next), colour(next)];
  const t = count > 1 ? index / (count - 1) : 0.5;
  const radius = Math.min(width, height) * 0.18;
  const cx = radius + (width - 2 * radius) * t;
  const cy = height * (0.45 + 0.2 * Math.sin(2 * Math.PI * (t + next())));
  const barTop = height - Math.max(2, Math.round(height / 16));
  const filled = Math.round((width * (index + 1)) / count);
  const pixels = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const mix = height > 1 ? y / (height - 1) : 0;
    const row = top.map((value, channel) => value + ((bottom[channel] ?? 0) - value) * mix);
    for (let x = 0; x < width; x++) {
      const inBar = y >= barTop && x < filled;
      const inDisc = (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius;
      const source = inBar ? bar : inDisc ? disc : row;
      const offset = (y * width + x) * 4;
      pixels[offset] = Math.round(source[0] ?? 0);
      pixels[offset + 1] = Math.round(source[1] ?? 0);
      pixels[offset + 2] = Math.round(source[2] ?? 0);
      pixels[offset + 3] = 255;
    }
  }
  return pixels;
}

/** The MP4 file: `seconds` JPEG frames, one per second. */
export async function renderVideo(spec: VideoSpec): Promise<Buffer> {
  if (!canRender(spec)) {
    throw new RangeError(`cannot draw a ${spec.width}x${spec.height} video of ${spec.seconds} s`);
  }
  const frames: Buffer[] = [];
  for (let index = 0; index < spec.seconds; index++) {
    const pixels = renderFrame(spec, index, spec.seconds);
    frames.push(await encodePixels(pixels, spec.width, spec.height, "jpeg", 75));
    // Encoding is synchronous: let other requests through between frames.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return muxMotionJpeg({ width: spec.width, height: spec.height, frames, frameMs: 1000 });
}
