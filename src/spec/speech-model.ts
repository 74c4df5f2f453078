/**
 * @module spec/speech-model
 * The text-to-speech capability. An adapter returns audio as a stream of bytes in the format it
 * names, so the endpoint can stream it to the client as it is produced.
 */
import type { CallSignal } from "./call-signal.ts";
import type { CallWarning } from "./warning.ts";

export type AudioFormat = "mp3" | "wav" | "pcm";

export interface SpeechCallOptions {
  upstreamModel: string;
  text: string;
  voice: string;
  /** The format the client asked for; the adapter may deliver another and say so. */
  format: AudioFormat;
  instructions?: string;
  abortSignal?: CallSignal;
}

export interface SpeechResult {
  /** Audio bytes as produced. */
  audio: AsyncIterable<Uint8Array>;
  /** What `audio` holds; `pcm` means 16-bit little-endian mono at `sampleRate`. */
  format: AudioFormat;
  sampleRate?: number;
  /** Characters the upstream billed, when it reports them. */
  characters: number | undefined;
  upstreamRequestId?: string;
  warnings: CallWarning[];
}

export interface SpeechModel {
  readonly specificationVersion: "switchyard-speech-1";
  readonly provider: string;
  doSpeech(options: SpeechCallOptions): Promise<SpeechResult>;
}
