/**
 * @module endpoints/speech/audio-container
 * Turns the audio an adapter delivers (raw PCM, or a WAV file) into the container the client
 * asked for, chunk by chunk: PCM gets a streaming WAV header or is encoded to MP3 as it comes;
 * a WAV file has its header checked and its PCM read out, behind a canonical header or into
 * the MP3 encoder.
 */
import type { AudioFormat } from "../../spec/index.ts";
import { encodeMp3 } from "./mp3-encoder.ts";
import { type PcmFormat, parseWavHeader, STREAMING_SIZE, wavHeader } from "./wav-header.ts";

/** What Qwen3-TTS streams: 24 kHz, 16-bit, mono. */
export const DEFAULT_PCM_RATE = 24_000;

export type OutputFormat = "mp3" | "wav";

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
};

export interface AudioSource {
  audio: AsyncIterable<Uint8Array>;
  format: AudioFormat;
  sampleRate?: number;
}

/**
 * The most bytes a WAV file's chunks before its audio may take: real headers are tens of bytes
 * (a `LIST` chunk of tags a few hundred more); a vendor that sends megabytes of them would have
 * the gateway buffer and re-read them.
 */
export const MAX_WAV_HEADER_BYTES = 64 * 1024;

/** The PCM of a WAV byte stream, once its header has been read. */
export async function openWav(
  chunks: AsyncIterable<Uint8Array>,
): Promise<{ format: PcmFormat; dataBytes: number; pcm: AsyncIterable<Uint8Array> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  let head = new Uint8Array(0);
  for (;;) {
    const parsed = parseWavHeader(head);
    if (parsed.status === "invalid") throw new Error(`Upstream audio: ${parsed.reason}.`);
    if (
      parsed.status === "ok"
        ? parsed.info.dataOffset > MAX_WAV_HEADER_BYTES
        : head.length > MAX_WAV_HEADER_BYTES
    )
      throw new Error(
        `Upstream audio: its WAV header runs past ${MAX_WAV_HEADER_BYTES} bytes without reaching the audio.`,
      );
    if (parsed.status === "ok") {
      const { dataOffset, dataBytes, ...format } = parsed.info;
      if (format.bitsPerSample !== 16 || format.channels < 1 || format.channels > 2) {
        throw new Error(
          `Upstream audio: ${format.bitsPerSample}-bit ${format.channels}-channel WAV is not supported.`,
        );
      }
      const first = head.subarray(dataOffset);
      return { format, dataBytes, pcm: limited(first, iterator, dataBytes) };
    }
    const next = await iterator.next();
    if (next.done) throw new Error("Upstream audio ended inside its WAV header.");
    const joined = new Uint8Array(head.length + next.value.length);
    joined.set(head);
    joined.set(next.value, head.length);
    head = joined;
  }
}

/**
 * The rest of the stream, cut at the announced data size (chunks after `data` are not audio).
 * A file that ends before the size its header announced is cut short: an error, not a shorter
 * file passed on behind a header that promises the whole (a streaming header, whose size says
 * "until the end", is read to the end).
 */
async function* limited(
  first: Uint8Array,
  rest: AsyncIterator<Uint8Array>,
  dataBytes: number,
): AsyncGenerator<Uint8Array> {
  let left = dataBytes;
  try {
    let chunk: Uint8Array | undefined = first;
    while (chunk !== undefined && left > 0) {
      const piece = chunk.length > left ? chunk.subarray(0, left) : chunk;
      left -= piece.length;
      if (piece.length > 0) yield piece;
      if (left <= 0) break;
      const next = await rest.next();
      chunk = next.done ? undefined : next.value;
    }
  } finally {
    await rest.return?.();
  }
  if (left > 0 && dataBytes !== STREAMING_SIZE)
    throw new Error(
      `Upstream audio ended ${left} bytes before the end its WAV header announced (${dataBytes} bytes).`,
    );
}

async function* prepend(
  head: Uint8Array,
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  yield head;
  yield* body;
}

// Generator functions made once, not per call: V8 keeps one made per call, and all it closes
// over, until its next full collection (docs/performance.md).

async function* wavAsWav(audio: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const { format, dataBytes, pcm } = await openWav(audio);
  yield* prepend(wavHeader({ ...format, dataBytes }), pcm);
}

async function* wavAsMp3(audio: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const { format, pcm } = await openWav(audio);
  yield* encodeMp3(pcm, { sampleRate: format.sampleRate, channels: format.channels === 2 ? 2 : 1 });
}

/** The audio in the client's container, as a lazy byte stream. */
export function toContainer(source: AudioSource, target: OutputFormat): AsyncIterable<Uint8Array> {
  if (source.format === "wav" && target === "wav") {
    // Read, not passed through: what the vendor calls a WAV file must be one (a header that
    // does not parse is an upstream error before the first byte), and only its audio goes on.
    return wavAsWav(source.audio);
  }
  if (source.format === target) return source.audio;
  const sampleRate = source.sampleRate ?? DEFAULT_PCM_RATE;
  if (source.format === "pcm") {
    return target === "wav"
      ? prepend(wavHeader({ sampleRate, channels: 1, bitsPerSample: 16 }), source.audio)
      : encodeMp3(source.audio, { sampleRate });
  }
  if (source.format === "wav" && target === "mp3") {
    return wavAsMp3(source.audio);
  }
  throw new Error(`Cannot turn ${source.format} audio into ${target}.`);
}
