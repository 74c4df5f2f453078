import { describe, expect, it } from "vitest";
import { parseWavHeader, STREAMING_SIZE, wavDurationSeconds, wavHeader } from "./wav-header.ts";

const FORMAT = { sampleRate: 24000, channels: 1, bitsPerSample: 16 };

function file(header: Uint8Array, dataBytes: number): Uint8Array {
  const bytes = new Uint8Array(header.length + dataBytes);
  bytes.set(header);
  return bytes;
}

describe("wavHeader", () => {
  it("writes the canonical 44-byte header with exact sizes", () => {
    const header = wavHeader({ ...FORMAT, dataBytes: 48000 });
    const view = new DataView(header.buffer);
    expect(header.length).toBe(44);
    expect(String.fromCharCode(...header.subarray(0, 4))).toBe("RIFF");
    expect(view.getUint32(4, true)).toBe(36 + 48000);
    expect(String.fromCharCode(...header.subarray(8, 16))).toBe("WAVEfmt ");
    expect(view.getUint16(20, true)).toBe(1);
    expect(view.getUint32(24, true)).toBe(24000);
    expect(view.getUint32(28, true)).toBe(48000); // byte rate
    expect(view.getUint16(32, true)).toBe(2); // block align
    expect(view.getUint32(40, true)).toBe(48000);
  });

  it("says 'read to the end' when the length is not known yet", () => {
    const view = new DataView(wavHeader(FORMAT).buffer);
    expect(view.getUint32(4, true)).toBe(STREAMING_SIZE);
    expect(view.getUint32(40, true)).toBe(STREAMING_SIZE);
  });
});

describe("parseWavHeader", () => {
  it("reads back what wavHeader wrote", () => {
    expect(parseWavHeader(wavHeader({ ...FORMAT, dataBytes: 10 }))).toEqual({
      status: "ok",
      info: { ...FORMAT, dataOffset: 44, dataBytes: 10 },
    });
  });

  it("skips chunks other than fmt and data", () => {
    const header = wavHeader({ ...FORMAT, dataBytes: 4 });
    const list = new Uint8Array(
      [..."LIST"].map((c) => c.charCodeAt(0)).concat([5, 0, 0, 0, 1, 2, 3, 4, 5, 0]),
    );
    const bytes = new Uint8Array(44 + list.length);
    bytes.set(header.subarray(0, 36));
    bytes.set(list, 36);
    bytes.set(header.subarray(36), 36 + list.length);
    const parsed = parseWavHeader(bytes);
    expect(parsed).toMatchObject({
      status: "ok",
      info: { dataOffset: 44 + list.length, dataBytes: 4 },
    });
  });

  it("asks for more bytes while the header is incomplete", () => {
    const header = wavHeader(FORMAT);
    for (const length of [0, 11, 20, 30, 43]) {
      expect(parseWavHeader(header.subarray(0, length)).status).toBe("incomplete");
    }
  });

  it("refuses what is not a PCM WAV file", () => {
    expect(parseWavHeader(new TextEncoder().encode("ID3\u0004 not a wave file")).status).toBe(
      "invalid",
    );
    const header = wavHeader(FORMAT);
    new DataView(header.buffer).setUint16(20, 3, true); // IEEE float
    expect(parseWavHeader(header)).toMatchObject({ status: "invalid", reason: /encoding 3/ });
  });
});

describe("wavDurationSeconds", () => {
  it("is data bytes / (rate × 2) for 16-bit mono", () => {
    expect(wavDurationSeconds(file(wavHeader({ ...FORMAT, dataBytes: 72000 }), 72000))).toBe(1.5);
  });

  it("counts the bytes actually there when the header says 'stream'", () => {
    expect(wavDurationSeconds(file(wavHeader(FORMAT), 24000))).toBe(0.5);
  });
});
