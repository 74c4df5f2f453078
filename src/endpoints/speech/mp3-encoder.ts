/**
 * @module endpoints/speech/mp3-encoder
 * Streaming MP3 encoding of 16-bit little-endian PCM with LAME (the pure-JavaScript port
 * `@breezystack/lamejs`): each PCM chunk is encoded as it arrives and the frames LAME completes
 * are yielded at once, so the client hears the start before the upstream has finished.
 */
import { Mp3Encoder } from "@breezystack/lamejs";

/** Sample rates an MP3 (MPEG-1, -2 and -2.5 layer III) stream can carry. */
export const MP3_SAMPLE_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];

/** Samples encoded in one go (about 0.4 s at 24 kHz: a few milliseconds of CPU). */
const SLICE_SAMPLES = 1152 * 8;

export interface Mp3Options {
  sampleRate: number;
  /** Interleaved input channels; stereo is mixed down to mono (speech). */
  channels?: 1 | 2;
  /** Constant bit rate; 64 kbps below 32 kHz, 128 kbps above by default. */
  kbps?: number;
}

/** Copies bytes into an aligned Int16Array (the platform is little-endian, as PCM is). */
function toSamples(bytes: Uint8Array): Int16Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Int16Array(copy.buffer);
}

function mixDown(stereo: Int16Array): Int16Array {
  const mono = new Int16Array(stereo.length / 2);
  for (let i = 0; i < mono.length; i++) {
    mono[i] = ((stereo[2 * i] ?? 0) + (stereo[2 * i + 1] ?? 0)) >> 1;
  }
  return mono;
}

/** LAME returns an Int8Array whatever its typings say; hand out plain bytes. */
function asBytes(frames: ArrayBufferView): Uint8Array {
  return new Uint8Array(frames.buffer, frames.byteOffset, frames.byteLength);
}

export async function* encodeMp3(
  pcm: AsyncIterable<Uint8Array>,
  options: Mp3Options,
): AsyncGenerator<Uint8Array> {
  if (!MP3_SAMPLE_RATES.includes(options.sampleRate)) {
    throw new Error(`MP3 cannot carry ${options.sampleRate} Hz audio.`);
  }
  const channels = options.channels ?? 1;
  const frameBytes = 2 * channels;
  const encoder = new Mp3Encoder(
    1,
    options.sampleRate,
    options.kbps ?? (options.sampleRate >= 32000 ? 128 : 64),
  );
  let carry = new Uint8Array(0);
  for await (const chunk of pcm) {
    let bytes = chunk;
    if (carry.length > 0) {
      bytes = new Uint8Array(carry.length + chunk.length);
      bytes.set(carry);
      bytes.set(chunk, carry.length);
    }
    const whole = bytes.length - (bytes.length % frameBytes);
    carry = bytes.slice(whole);
    if (whole === 0) continue;
    const all = toSamples(bytes.subarray(0, whole));
    const samples = channels === 2 ? mixDown(all) : all;
    // Big chunks (a downloaded file) are encoded a slice at a time, letting other requests run.
    for (let start = 0; start < samples.length; start += SLICE_SAMPLES) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const encoded = asBytes(encoder.encodeBuffer(samples.subarray(start, start + SLICE_SAMPLES)));
      if (encoded.length > 0) yield encoded;
    }
  }
  const tail = asBytes(encoder.flush());
  if (tail.length > 0) yield tail;
}
