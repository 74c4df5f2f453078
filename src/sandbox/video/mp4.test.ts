/**
 * The sandbox's video files are real MP4s: read back by an independent box reader (layout,
 * durations, size, the `mp4v`/JPEG sample entry, every sample a whole JPEG of the frame size)
 * and, when the machine has ffprobe, by ffmpeg itself (codec `mjpeg`, duration, frame count).
 * Files are deterministic: the same spec gives the same bytes, another seed other bytes.
 */
import jpeg from "jpeg-js";
import { describe, expect, it } from "vitest";
import { muxMotionJpeg } from "./mp4-mux.ts";
import { frameSize, MAX_FRAME_SIDE, renderVideo } from "./video-frames.ts";
import { parseVideoFileName, videoFileName } from "./video-results.ts";
import { ffprobe, hasFfprobe, readMp4 } from "./video-test-kit.ts";

const FFPROBE = hasFfprobe();

describe("sandbox video files", () => {
  it("are MP4s whose duration is one second per frame", async () => {
    const spec = { ...frameSize(720, 16, 9), seconds: 4, seed: 42 };
    const bytes = await renderVideo(spec);
    const mp4 = readMp4(bytes);
    expect(mp4.layout).toEqual(["ftyp", "moov", "mdat"]);
    expect(mp4.brands).toEqual(["isom", "isom", "iso2", "mp41"]);
    expect(mp4.movieDurationSeconds).toBe(4);
    expect(mp4.mediaDurationSeconds).toBe(4);
    expect([mp4.width, mp4.height]).toEqual([256, 144]);
    expect(mp4.handler).toBe("vide");
    expect(mp4.sampleEntry).toBe("mp4v");
    expect(mp4.objectType).toBe(0x6c); // JPEG (ISO/IEC 10918-1)
    expect(mp4.sampleDurations).toEqual([1000, 1000, 1000, 1000]);
    expect(mp4.samples).toHaveLength(4);
    const decoded = mp4.samples.map((sample) => {
      expect([sample[0], sample[1]]).toEqual([0xff, 0xd8]);
      expect([sample.at(-2), sample.at(-1)]).toEqual([0xff, 0xd9]);
      return jpeg.decode(sample, { useTArray: true });
    });
    for (const frame of decoded) expect([frame.width, frame.height]).toEqual([256, 144]);
    // The frames move: no two are the same picture.
    expect(new Set(mp4.samples.map((sample) => Buffer.from(sample).toString("base64"))).size).toBe(
      4,
    );
  });

  it("keep frames small and in the requested shape", () => {
    expect(frameSize(1080, 16, 9)).toEqual({ width: 320, height: 180 });
    expect(frameSize(1080, 9, 16)).toEqual({ width: 180, height: 320 });
    expect(frameSize(720, 1, 1)).toEqual({ width: 256, height: 256 });
    expect(frameSize(480, 4, 3)).toEqual({ width: 192, height: 144 });
    expect(frameSize(480, 2, 3)).toEqual({ width: 128, height: 192 });
    for (const tier of [480, 720, 1080]) {
      expect(Math.max(...Object.values(frameSize(tier, 3, 4)))).toBeLessThanOrEqual(MAX_FRAME_SIDE);
    }
  });

  it("are the same bytes for the same spec and other bytes for another seed", async () => {
    const spec = { width: 64, height: 36, seconds: 2, seed: 7 };
    const [first, again, other] = await Promise.all([
      renderVideo(spec),
      renderVideo(spec),
      renderVideo({ ...spec, seed: 8 }),
    ]);
    expect(first.equals(again)).toBe(true);
    expect(first.equals(other)).toBe(false);
  });

  it("name themselves by what they show, and refuse what they cannot draw", async () => {
    const spec = { width: 320, height: 180, seconds: 15, seed: 0xdeadbeef };
    expect(videoFileName(spec)).toBe("vid-320x180-15s-deadbeef.mp4");
    expect(parseVideoFileName(videoFileName(spec))).toEqual(spec);
    expect(parseVideoFileName("vid-320x180-15s-deadbeef.mov")).toBeUndefined();
    await expect(renderVideo({ ...spec, seconds: 16 })).rejects.toThrow(RangeError);
    await expect(renderVideo({ ...spec, width: 321 })).rejects.toThrow(RangeError);
    expect(() => muxMotionJpeg({ width: 2, height: 2, frames: [], frameMs: 1000 })).toThrow();
  });

  it.skipIf(!FFPROBE)("are read by ffprobe as Motion JPEG of the right duration", async () => {
    const bytes = await renderVideo({ ...frameSize(1080, 9, 16), seconds: 5, seed: 3 });
    expect(ffprobe(bytes)).toEqual({
      codec: "mjpeg",
      width: 180,
      height: 320,
      durationSeconds: 5,
      frames: 5,
    });
  });
});
