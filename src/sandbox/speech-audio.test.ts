import { afterEach, describe, expect, it } from "vitest";
import {
  espeakLanguage,
  hasEspeak,
  synthesizeSpeech,
  TTS_SAMPLE_RATE,
  toneSpeech,
} from "./audio-synth.ts";
import { readWavSamples, resample, wavFile } from "./audio-wav.ts";
import { parseTtsRequest, ttsModelOf } from "./speech-request.ts";

const seconds = (samples: Int16Array) => samples.length / TTS_SAMPLE_RATE;

describe("toneSpeech", () => {
  it("lasts longer for longer text, pausing at spaces and punctuation", () => {
    const short = toneSpeech("Hello.", "Cherry");
    const long = toneSpeech("Hello. ".repeat(5), "Cherry");
    expect(seconds(short)).toBeGreaterThan(0.3);
    expect(seconds(long)).toBeGreaterThan(seconds(short) * 5);
    expect(seconds(toneSpeech("你好", "Cherry"))).toBeCloseTo(0.4, 2);
  });

  it("is deterministic, audible and different per voice", () => {
    const a = toneSpeech("Hello there", "Cherry");
    expect(toneSpeech("Hello there", "Cherry")).toEqual(a);
    expect(toneSpeech("Hello there", "Ethan")).not.toEqual(a);
    const peak = a.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
    expect(peak).toBeGreaterThan(3000);
    expect(peak).toBeLessThanOrEqual(32767);
  });
});

describe("synthesizeSpeech", () => {
  const saved = process.env.SANDBOX_TTS_ENGINE;
  afterEach(() => {
    if (saved === undefined) delete process.env.SANDBOX_TTS_ENGINE;
    else process.env.SANDBOX_TTS_ENGINE = saved;
  });

  it("uses the tone voice when told to", async () => {
    process.env.SANDBOX_TTS_ENGINE = "tone";
    const { engine, samples } = await synthesizeSpeech({ text: "Hello", voice: "Cherry" });
    expect(engine).toBe("tone");
    expect(samples).toEqual(toneSpeech("Hello", "Cherry"));
  });

  it("speaks with espeak-ng when it is installed, longer for longer text", async () => {
    delete process.env.SANDBOX_TTS_ENGINE;
    const installed = await hasEspeak();
    const short = await synthesizeSpeech({ text: "Hello.", voice: "Cherry" });
    const long = await synthesizeSpeech({
      text: "Hello there, how are you doing today?",
      voice: "Cherry",
    });
    expect(short.engine).toBe(installed ? "espeak-ng" : "tone");
    expect(seconds(long.samples)).toBeGreaterThan(seconds(short.samples) * 1.5);
  });
});

describe("espeakLanguage", () => {
  it("follows language_type, else the script of the text", () => {
    expect(espeakLanguage("hello", "German")).toBe("de");
    expect(espeakLanguage("你好")).toBe("cmn");
    expect(espeakLanguage("こんにちは")).toBe("ja");
    expect(espeakLanguage("안녕")).toBe("ko");
    expect(espeakLanguage("привет")).toBe("ru");
    expect(espeakLanguage("hello")).toBe("en");
  });
});

describe("audio-wav", () => {
  it("round-trips samples through a WAV file", () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768]);
    const file = wavFile(samples, 24000);
    expect(file.length).toBe(44 + 10);
    expect(readWavSamples(file)).toEqual({ samples, sampleRate: 24000 });
  });

  it("resamples to the new rate", () => {
    expect(resample(new Int16Array(22050), 22050, 24000).length).toBe(24000);
    expect(Array.from(resample(Int16Array.from([0, 100]), 1, 2))).toEqual([0, 50, 100, 100]);
  });
});

describe("parseTtsRequest", () => {
  it("knows the models and their snapshots", () => {
    expect(ttsModelOf("qwen3-tts-flash-2025-11-27")).toBe("qwen3-tts-flash");
    expect(ttsModelOf("qwen3-tts-flash-realtime")).toBeUndefined();
  });

  it("counts code points and drops instructions the basic model ignores", () => {
    const parsed = parseTtsRequest({
      model: "qwen3-tts-flash",
      input: { text: "👋🏽 hi", voice: "Cherry", instructions: "x" },
    });
    expect(parsed).toEqual({
      ok: true,
      request: {
        model: "qwen3-tts-flash",
        text: "👋🏽 hi",
        voice: "Cherry",
        languageType: "Auto",
        characters: 5,
      },
    });
  });
});
