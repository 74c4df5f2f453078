/**
 * @module endpoints/speech/mp3-frames
 * Walks the frames of an MPEG audio layer III stream (pure): checks every frame header's sync
 * word, version, bit rate and sample rate, and that frames follow each other to the end. Gives
 * the frame count and the duration. Used by the tests to prove the MP3 the gateway sends is
 * decodable without a decoder on the machine.
 */

export interface Mp3Summary {
  frames: number;
  sampleRate: number;
  /** Bit rate of the first frame, kbps. */
  kbps: number;
  durationSeconds: number;
}

// biome-ignore format: tables
const BITRATES = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};

interface FrameHeader {
  length: number;
  sampleRate: number;
  kbps: number;
  samples: number;
}

/** The layer III frame header at `offset`, or a reason it is not one. */
export function readFrameHeader(bytes: Uint8Array, offset: number): FrameHeader | string {
  if (offset + 4 > bytes.length) return "truncated header";
  const [b0, b1, b2] = [bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!];
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return "no sync word";
  const version = (b1 >> 3) & 3;
  if (version === 1) return "reserved MPEG version";
  if (((b1 >> 1) & 3) !== 1) return "not layer III";
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15) return "bad bit rate";
  if (rateIndex === 3) return "bad sample rate";
  const kbps = (version === 3 ? BITRATES.v1 : BITRATES.v2)[bitrateIndex]!;
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
  const padding = (b2 >> 1) & 1;
  const samples = version === 3 ? 1152 : 576;
  const length = Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + padding;
  return { length, sampleRate, kbps, samples };
}

function id3v2Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || String.fromCharCode(...bytes.subarray(0, 3)) !== "ID3") return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7);
  return 10 + size + (bytes[9]! & 0x7f);
}

/** Summarizes an MP3 file; throws naming the offset of the first bad frame. */
export function summarizeMp3(bytes: Uint8Array): Mp3Summary {
  let offset = id3v2Length(bytes);
  let frames = 0;
  let samples = 0;
  let first: FrameHeader | undefined;
  while (offset < bytes.length) {
    if (
      bytes.length - offset === 128 &&
      String.fromCharCode(...bytes.subarray(offset, offset + 3)) === "TAG"
    )
      break;
    const header = readFrameHeader(bytes, offset);
    if (typeof header === "string")
      throw new Error(`MP3 frame ${frames} at byte ${offset}: ${header}`);
    if (first && header.sampleRate !== first.sampleRate) {
      throw new Error(`MP3 frame ${frames} at byte ${offset}: sample rate changes`);
    }
    if (offset + header.length > bytes.length) {
      throw new Error(`MP3 frame ${frames} at byte ${offset}: truncated`);
    }
    first ??= header;
    frames++;
    samples += header.samples;
    offset += header.length;
  }
  if (!first) throw new Error("no MP3 frames");
  return {
    frames,
    sampleRate: first.sampleRate,
    kbps: first.kbps,
    durationSeconds: samples / first.sampleRate,
  };
}
