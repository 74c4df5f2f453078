/**
 * @module sandbox/audio-synth
 * Speech for the sandbox's TTS: real speech from espeak-ng when it is on PATH (looked up once),
 * otherwise a synthesized voice-like signal (a syllable per character, pauses at spaces and
 * punctuation) whose length grows with the text. Both give 24 kHz 16-bit mono, as Qwen3-TTS
 * does; the voice name picks the pitch and timbre, so each voice sounds its own.
 * `SANDBOX_TTS_ENGINE=tone` (or `espeak-ng`) forces an engine.
 */
import { execFile, spawn } from "node:child_process";
import { readWavSamples, resample } from "./audio-wav.ts";
import { stableHash } from "./deterministic-text.ts";

export const TTS_SAMPLE_RATE = 24_000;
export type SynthesisEngine = "espeak-ng" | "tone";

export interface SynthesisInput {
  text: string;
  voice: string;
  /** Qwen's `language_type` (`Auto`, `English`, `Chinese`, ...). */
  languageType?: string;
}

const ESPEAK_LANGUAGES: Record<string, string> = {
  Chinese: "cmn",
  English: "en",
  German: "de",
  Italian: "it",
  Portuguese: "pt",
  Spanish: "es",
  Japanese: "ja",
  Korean: "ko",
  French: "fr",
  Russian: "ru",
};

const ESPEAK_VARIANTS = ["f1", "f2", "f3", "f4", "f5", "m1", "m2", "m3", "m4", "m5"];
const ESPEAK_TIMEOUT_MS = 15_000;

let espeakAvailable: Promise<boolean> | undefined;

/** Whether `espeak-ng` runs; asked once per process. */
export function hasEspeak(): Promise<boolean> {
  espeakAvailable ??= new Promise((resolve) => {
    execFile("espeak-ng", ["--version"], { timeout: 5_000 }, (error) => resolve(!error));
  });
  return espeakAvailable;
}

/** The espeak-ng voice for a language: `Auto` looks at the script of the text. */
export function espeakLanguage(text: string, languageType = "Auto"): string {
  const named = ESPEAK_LANGUAGES[languageType];
  if (named) return named;
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return "ja";
  if (/\p{Script=Hangul}/u.test(text)) return "ko";
  if (/\p{Script=Han}/u.test(text)) return "cmn";
  if (/\p{Script=Cyrillic}/u.test(text)) return "ru";
  return "en";
}

function runEspeak(input: SynthesisInput): Promise<Int16Array> {
  const seed = stableHash(input.voice);
  const variant = ESPEAK_VARIANTS[seed % ESPEAK_VARIANTS.length] ?? "f2";
  const args = [
    "--stdout",
    "--stdin",
    "-v",
    `${espeakLanguage(input.text, input.languageType)}+${variant}`,
    "-p",
    String(35 + (seed % 40)),
    "-s",
    String(160 + ((seed >>> 8) % 30)),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("espeak-ng", args, { stdio: ["pipe", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), ESPEAK_TIMEOUT_MS);
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`espeak-ng exited with ${code}`));
      try {
        const { samples, sampleRate } = readWavSamples(Buffer.concat(chunks));
        resolve(resample(samples, sampleRate, TTS_SAMPLE_RATE));
      } catch (error) {
        reject(error);
      }
    });
    child.stdin.on("error", () => {}); // a child that died early: reported by 'close'
    child.stdin.end(input.text);
  });
}

/** Seconds of sound (or pause) one character stands for in the tone voice. */
function characterSeconds(char: string): { seconds: number; voiced: boolean } {
  if (/\s/u.test(char)) return { seconds: 0.06, voiced: false };
  if (/[\p{P}\p{S}]/u.test(char)) return { seconds: 0.16, voiced: false };
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(char)) {
    return { seconds: 0.2, voiced: true };
  }
  return { seconds: 0.075, voiced: true };
}

/** Formant pairs of a few vowels; each character picks one, so the timbre moves like speech. */
const VOWELS: readonly [number, number][] = [
  [730, 1090],
  [530, 1840],
  [270, 2290],
  [570, 840],
  [300, 870],
  [640, 1190],
];

const HARMONICS = 12;

/** Two formant resonances, and a spectrum that falls with the harmonic number. */
function harmonicGain(frequency: number, f1: number, f2: number, harmonic: number): number {
  const formants =
    1 / (1 + ((frequency - f1) / 90) ** 2) + 0.6 / (1 + ((frequency - f2) / 120) ** 2);
  return formants / Math.sqrt(harmonic);
}

/** The voice-like fallback: a glottal pulse train shaped by vowel formants, syllable by syllable. */
export function toneSpeech(text: string, voice: string): Int16Array {
  const seed = stableHash(voice);
  const base = 110 + (seed % 150); // 110–260 Hz: low male to high female
  const parts = [...text].map(characterSeconds);
  const total = parts.reduce((sum, part) => sum + Math.round(part.seconds * TTS_SAMPLE_RATE), 0);
  const out = new Int16Array(total);
  let offset = 0;
  let phase = 0;
  [...text].forEach((char, index) => {
    const part = parts[index]!;
    const length = Math.round(part.seconds * TTS_SAMPLE_RATE);
    if (part.voiced) {
      const [f1, f2] = VOWELS[(char.codePointAt(0) ?? 0) % VOWELS.length]!;
      const gains = Array.from({ length: HARMONICS }, (_, k) =>
        harmonicGain((k + 1) * base, f1, f2, k + 1),
      );
      for (let i = 0; i < length; i++) {
        const progress = i / length;
        const f0 = base * (1.08 - 0.16 * progress); // falling pitch within the syllable
        phase += (2 * Math.PI * f0) / TTS_SAMPLE_RATE;
        // sin(k·x) for k = 1..12 by the Chebyshev recurrence: two trig calls per sample.
        const twoCos = 2 * Math.cos(phase);
        let previous = 0;
        let current = Math.sin(phase);
        let sample = 0;
        for (const gain of gains) {
          sample += gain * current;
          const next = twoCos * current - previous;
          previous = current;
          current = next;
        }
        const envelope = Math.sin(Math.PI * progress);
        out[offset + i] = Math.max(-32767, Math.min(32767, Math.round(sample * envelope * 6000)));
      }
    }
    offset += length;
  });
  return out;
}

/** Speech for the text: espeak-ng when available (and not turned off), else the tone voice. */
export async function synthesizeSpeech(
  input: SynthesisInput,
): Promise<{ samples: Int16Array; engine: SynthesisEngine }> {
  const wanted = process.env.SANDBOX_TTS_ENGINE;
  if (wanted !== "tone" && (wanted === "espeak-ng" || (await hasEspeak()))) {
    try {
      const samples = await runEspeak(input);
      if (samples.length > 0) return { samples, engine: "espeak-ng" };
    } catch {
      // Fall through to the tone voice: the sandbox must answer either way.
    }
  }
  return { samples: toneSpeech(input.text, input.voice), engine: "tone" };
}
