import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../../catalog/index.ts";
import type { GatewayError } from "../../errors/index.ts";
import { countCharacters, estimateSpeechCost, speechUsage } from "./estimate-speech-cost.ts";
import { planSpeech } from "./plan-speech.ts";
import type { SpeechRequest } from "./schema.ts";

function model(id: string, formats: string[], instructions: boolean): CatalogModel {
  return {
    id,
    endpoint: "speech",
    capabilities: { voices: ["Cherry", "Serena"], audio_formats: formats, instructions },
    pricing: { per_10k_characters: 100_000 },
    routes: [],
    resolvedRoutes: [],
  } as unknown as CatalogModel;
}

const FLASH = model("tts3-flash", ["mp3", "wav"], false);
const INSTRUCT = model("tts3-instruct-flash", ["wav"], true);

function request(extra: Partial<SpeechRequest> = {}): SpeechRequest {
  return { model: "tts3-flash", input: "Hello", ...extra };
}

function failure(body: SpeechRequest, on: CatalogModel): GatewayError | undefined {
  try {
    planSpeech(body, on);
    return undefined;
  } catch (error) {
    return error as GatewayError;
  }
}

describe("planSpeech", () => {
  it("defaults to Cherry and MP3", () => {
    expect(planSpeech(request(), FLASH)).toEqual({
      voice: { voice: "Cherry", source: "default" },
      format: "mp3",
      warnings: [],
    });
  });

  it("gives WAV when asked", () => {
    expect(planSpeech(request({ response_format: "wav" }), FLASH).format).toBe("wav");
  });

  it("answers WAV from a WAV-only model, with a warning only when MP3 was asked", () => {
    expect(planSpeech(request(), INSTRUCT)).toMatchObject({ format: "wav", warnings: [] });
    const plan = planSpeech(request({ response_format: "mp3" }), INSTRUCT);
    expect(plan.format).toBe("wav");
    expect(plan.warnings).toEqual([
      {
        type: "compatibility",
        setting: "response_format",
        details: "tts3-instruct-flash always returns wav",
      },
    ]);
  });

  it("refuses empty or blank input", () => {
    for (const input of ["", " \n\t "]) {
      expect(failure(request({ input }), FLASH)).toMatchObject({
        code: "invalid_parameter",
        param: "input",
      });
    }
  });

  it("refuses an unknown voice, naming it and the model's voices", () => {
    const error = failure(request({ voice: "Nobody" }), FLASH);
    expect(error).toMatchObject({ code: "invalid_parameter", param: "voice", status: 400 });
    expect(error?.message).toMatch(/'Nobody' is not a voice of tts3-flash.*'Cherry', 'Serena'/);
  });

  it("replaces an OpenAI voice with Cherry and warns", () => {
    const plan = planSpeech(request({ voice: "nova" }), FLASH);
    expect(plan.voice).toEqual({ voice: "Cherry", source: "openai", replaced: "nova" });
    expect(plan.warnings).toEqual([
      {
        type: "compatibility",
        setting: "voice",
        details: "'nova' is an OpenAI voice; using 'Cherry'",
      },
    ]);
  });

  it("takes instructions only where the model does", () => {
    expect(failure(request({ instructions: "Whisper." }), FLASH)).toMatchObject({
      param: "instructions",
    });
    expect(failure(request({ instructions: "  " }), FLASH)).toBeUndefined();
    expect(planSpeech(request({ instructions: " Whisper. " }), INSTRUCT).instructions).toBe(
      "Whisper.",
    );
  });

  it("warns that speed has no effect (but not for the neutral 1)", () => {
    expect(planSpeech(request({ speed: 1 }), FLASH).warnings).toEqual([]);
    expect(planSpeech(request({ speed: 2 }), FLASH).warnings).toEqual([
      { type: "unsupported", setting: "speed", details: "ignored" },
    ]);
    expect(planSpeech(request({ speed: 0.5 }), INSTRUCT).warnings[0]).toMatchObject({
      setting: "speed",
      details: expect.stringMatching(/instructions/),
    });
  });
});

describe("speech billing", () => {
  it("counts Unicode code points, not UTF-16 units", () => {
    expect(countCharacters("abc")).toBe(3);
    expect(countCharacters("你好")).toBe(2);
    expect(countCharacters("👋🏽")).toBe(2); // hand + skin tone modifier
    expect("👋🏽".length).toBe(4);
  });

  it("bills the gateway's count and keeps the upstream's for audit", () => {
    expect(speechUsage("你好", 4)).toEqual({
      characters: 2,
      source: "estimated",
      raw: { characters: 4 },
    });
  });

  it("holds exactly the price of the characters", async () => {
    const priced = await estimateSpeechCost(request({ input: "x".repeat(150) }), FLASH);
    expect(priced.costMicros).toBe(1500);
    expect(priced.lineItems).toEqual([
      { item: "characters", units: 150, unitPriceMicros: 100_000, per: 10_000, costMicros: 1500 },
    ]);
  });
});
