import { describe, expect, it } from "vitest";
import { MAX_WAV_HEADER_BYTES, openWav, toContainer } from "./audio-container.ts";
import { encodeMp3 } from "./mp3-encoder.ts";
import { readFrameHeader, summarizeMp3 } from "./mp3-frames.ts";
import { parseWavHeader, wavDurationSeconds, wavHeader } from "./wav-header.ts";

/** `seconds` of a 220 Hz tone as 16-bit little-endian PCM. */
function tone(seconds: number, rate = 24000): Uint8Array {
  const samples = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / rate));
  }
  return new Uint8Array(samples.buffer);
}

/** Splits bytes into chunks of awkward (odd) sizes, as a network would. */
async function* chunked(bytes: Uint8Array, size = 1001): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(
  stream: AsyncIterable<Uint8Array>,
): Promise<{ bytes: Uint8Array; chunks: number }> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return { bytes: new Uint8Array(Buffer.concat(parts)), chunks: parts.length };
}

function wavFile(pcm: Uint8Array): Uint8Array {
  const header = wavHeader({
    sampleRate: 24000,
    channels: 1,
    bitsPerSample: 16,
    dataBytes: pcm.length,
  });
  return new Uint8Array(Buffer.concat([header, pcm]));
}

describe("encodeMp3", () => {
  it("encodes PCM into frames that decode to the same duration", async () => {
    const { bytes, chunks } = await collect(encodeMp3(chunked(tone(2)), { sampleRate: 24000 }));
    const mp3 = summarizeMp3(bytes);
    expect(mp3).toMatchObject({ sampleRate: 24000, kbps: 64 });
    // LAME adds encoder delay and pads the last frame: at most a few frames more.
    expect(mp3.durationSeconds).toBeGreaterThanOrEqual(2);
    expect(mp3.durationSeconds).toBeLessThan(2.15);
    expect(chunks).toBeGreaterThan(10); // streamed, not one blob at the end
  });

  it("yields audio before the input has ended", async () => {
    let fed = 0;
    async function* slow(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 10; i++) {
        fed++;
        yield tone(0.2);
      }
    }
    const encoder = encodeMp3(slow(), { sampleRate: 24000 });
    await encoder.next();
    expect(fed).toBeLessThan(10);
    await encoder.return(undefined);
  });

  it("mixes stereo down to mono", async () => {
    const mono = new Int16Array(tone(1).buffer);
    const stereo = new Int16Array(mono.length * 2);
    mono.forEach((sample, i) => {
      stereo[2 * i] = sample;
      stereo[2 * i + 1] = sample;
    });
    const { bytes } = await collect(
      encodeMp3(chunked(new Uint8Array(stereo.buffer), 777), { sampleRate: 24000, channels: 2 }),
    );
    expect(summarizeMp3(bytes).durationSeconds).toBeCloseTo(1, 0);
  });

  it("refuses a rate MP3 cannot carry", async () => {
    await expect(collect(encodeMp3(chunked(tone(0.1)), { sampleRate: 23000 }))).rejects.toThrow(
      /23000/,
    );
  });
});

describe("summarizeMp3", () => {
  it("refuses bytes that are not MP3 frames", () => {
    expect(() => summarizeMp3(tone(0.1))).toThrow(/no sync word/);
    expect(readFrameHeader(new Uint8Array([0xff, 0xfb, 0xf0, 0]), 0)).toBe("bad bit rate");
  });

  it("refuses a stream cut inside a frame", async () => {
    const { bytes } = await collect(encodeMp3(chunked(tone(1)), { sampleRate: 24000 }));
    expect(() => summarizeMp3(bytes.subarray(0, bytes.length - 10))).toThrow(/truncated/);
  });
});

describe("openWav", () => {
  it("reads the format from a header split across chunks, then hands on the PCM only", async () => {
    const pcm = tone(0.5);
    const { format, pcm: audio } = await openWav(chunked(wavFile(pcm), 7));
    expect(format).toEqual({ sampleRate: 24000, channels: 1, bitsPerSample: 16 });
    expect(Buffer.from((await collect(audio)).bytes).equals(Buffer.from(pcm))).toBe(true);
  });

  it("stops at the end of the data chunk", async () => {
    const pcm = tone(0.1);
    const trailer = new Uint8Array(Buffer.from("LIST\u0004\u0000\u0000\u0000junk", "latin1"));
    const { pcm: audio } = await openWav(
      chunked(new Uint8Array(Buffer.concat([wavFile(pcm), trailer]))),
    );
    expect((await collect(audio)).bytes.length).toBe(pcm.length);
  });

  it("refuses what is not WAV, and a stream that ends in the header", async () => {
    await expect(openWav(chunked(tone(0.1)))).rejects.toThrow(/not a RIFF/);
    await expect(openWav(chunked(wavFile(tone(0.1)).subarray(0, 30)))).rejects.toThrow(
      /ended inside/,
    );
  });
});

describe("openWav, against a vendor's odd files", () => {
  /** A WAV file with a `LIST` chunk of `listBytes` between its RIFF header and `fmt `. */
  function withList(pcm: Uint8Array, listBytes: number): Uint8Array {
    const file = Buffer.from(wavFile(pcm));
    const list = Buffer.alloc(8 + listBytes, 0x20);
    list.write("LIST", 0, "latin1");
    list.writeUInt32LE(listBytes, 4);
    return new Uint8Array(Buffer.concat([file.subarray(0, 12), list, file.subarray(12)]));
  }

  it("skips a chunk of tags before the audio", async () => {
    const pcm = tone(0.1);
    const { pcm: audio } = await openWav(chunked(withList(pcm, 4000)));
    expect(Buffer.from((await collect(audio)).bytes).equals(Buffer.from(pcm))).toBe(true);
  });

  it("refuses a header that runs past MAX_WAV_HEADER_BYTES instead of buffering it", async () => {
    await expect(
      openWav(chunked(withList(tone(0.1), MAX_WAV_HEADER_BYTES + 10_000), 16_384)),
    ).rejects.toThrow(/header runs past/);
  });

  it("fails a file that ends before the audio its header announced", async () => {
    const pcm = tone(0.1);
    const cut = wavFile(pcm).subarray(0, 44 + pcm.length - 100);
    const { pcm: audio } = await openWav(chunked(cut));
    await expect(collect(audio)).rejects.toThrow(/ended 100 bytes before/);
  });

  it("reads a streaming header (size unknown) to the end", async () => {
    const pcm = tone(0.1);
    const header = wavHeader({ sampleRate: 24000, channels: 1, bitsPerSample: 16 });
    const { pcm: audio } = await openWav(chunked(new Uint8Array(Buffer.concat([header, pcm]))));
    expect((await collect(audio)).bytes.length).toBe(pcm.length);
  });
});

describe("toContainer", () => {
  it("wraps PCM in a streaming WAV header", async () => {
    const pcm = tone(1);
    const { bytes } = await collect(
      toContainer({ audio: chunked(pcm), format: "pcm", sampleRate: 24000 }, "wav"),
    );
    expect(parseWavHeader(bytes)).toMatchObject({
      status: "ok",
      info: { sampleRate: 24000, dataOffset: 44 },
    });
    expect(wavDurationSeconds(bytes)).toBe(1);
  });

  it("encodes PCM and WAV to MP3", async () => {
    for (const source of [
      { audio: chunked(tone(1)), format: "pcm" as const },
      { audio: chunked(wavFile(tone(1))), format: "wav" as const },
    ]) {
      const { bytes } = await collect(toContainer(source, "mp3"));
      expect(summarizeMp3(bytes).durationSeconds).toBeCloseTo(1, 0);
    }
  });

  it("passes audio already in the asked container through untouched", async () => {
    const file = wavFile(tone(0.2));
    const { bytes } = await collect(toContainer({ audio: chunked(file), format: "wav" }, "wav"));
    expect(Buffer.from(bytes).equals(Buffer.from(file))).toBe(true);
  });

  it("cannot make WAV out of MP3", () => {
    expect(() => toContainer({ audio: chunked(new Uint8Array(4)), format: "mp3" }, "wav")).toThrow(
      /mp3 audio into wav/,
    );
  });
});
