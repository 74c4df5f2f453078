/**
 * @module endpoints/speech/wav-header
 * The RIFF/WAVE header of 16-bit PCM audio (pure): building one, with the sizes of a known
 * length or the "until the end" sizes of a stream, and reading one back.
 */

/** RIFF and data sizes of a stream whose length is not known when the header is sent. */
export const STREAMING_SIZE = 0xffffffff;

export interface PcmFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
}

export interface WavInfo extends PcmFormat {
  /** Offset of the first audio byte. */
  dataOffset: number;
  /** Bytes of audio the header announces (`STREAMING_SIZE` when unknown). */
  dataBytes: number;
}

/** A 44-byte canonical header; without `dataBytes` the sizes say "read to the end". */
export function wavHeader(format: PcmFormat & { dataBytes?: number }): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) header[offset + i] = text.charCodeAt(i);
  };
  const blockAlign = (format.channels * format.bitsPerSample) / 8;
  const dataBytes = format.dataBytes ?? STREAMING_SIZE;
  ascii(0, "RIFF");
  view.setUint32(4, dataBytes === STREAMING_SIZE ? STREAMING_SIZE : 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, format.channels, true);
  view.setUint32(24, format.sampleRate, true);
  view.setUint32(28, format.sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, format.bitsPerSample, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  return header;
}

export type WavParse =
  | { status: "ok"; info: WavInfo }
  /** The bytes so far end before the `data` chunk starts. */
  | { status: "incomplete" }
  | { status: "invalid"; reason: string };

function text(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + 4));
}

/** Reads the header at the start of `bytes`, skipping chunks other than `fmt ` and `data`. */
export function parseWavHeader(bytes: Uint8Array): WavParse {
  if (bytes.length < 12) return { status: "incomplete" };
  if (text(bytes, 0) !== "RIFF" || text(bytes, 8) !== "WAVE") {
    return { status: "invalid", reason: "not a RIFF/WAVE file" };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: (PcmFormat & { encoding: number }) | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = text(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    if (id === "data") {
      if (!format) return { status: "invalid", reason: "data chunk before fmt chunk" };
      if (format.encoding !== 1 && format.encoding !== 0xfffe) {
        return { status: "invalid", reason: `unsupported WAV encoding ${format.encoding}` };
      }
      const { encoding: _, ...pcm } = format;
      return { status: "ok", info: { ...pcm, dataOffset: offset + 8, dataBytes: size } };
    }
    if (id === "fmt ") {
      if (offset + 8 + 16 > bytes.length) return { status: "incomplete" };
      format = {
        encoding: view.getUint16(offset + 8, true),
        channels: view.getUint16(offset + 10, true),
        sampleRate: view.getUint32(offset + 12, true),
        bitsPerSample: view.getUint16(offset + 22, true),
      };
    }
    offset += 8 + size + (size % 2);
  }
  return { status: "incomplete" };
}

/** Seconds of audio in a complete WAV file (by its real length when the header says "stream"). */
export function wavDurationSeconds(bytes: Uint8Array): number {
  const parsed = parseWavHeader(bytes);
  if (parsed.status !== "ok") throw new Error(`not a WAV file: ${parsed.status}`);
  const { info } = parsed;
  const available = bytes.length - info.dataOffset;
  const dataBytes = Math.min(info.dataBytes, available);
  return dataBytes / (info.sampleRate * info.channels * (info.bitsPerSample / 8));
}
