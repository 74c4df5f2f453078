import { describe, expect, it } from "vitest";
import { defaultVoice, OPENAI_VOICES, resolveVoice } from "./resolve-voice.ts";

const VOICES = ["Cherry", "Serena", "Eldric Sage", "Ono Anna", "Li"];

describe("resolveVoice", () => {
  it("defaults to Cherry when no voice is given", () => {
    expect(resolveVoice(undefined, VOICES)).toEqual({ voice: "Cherry", source: "default" });
    expect(resolveVoice("  ", VOICES)).toEqual({ voice: "Cherry", source: "default" });
  });

  it("keeps a voice of the model", () => {
    expect(resolveVoice("Serena", VOICES)).toEqual({ voice: "Serena", source: "model" });
  });

  it("matches the model's names ignoring case and extra spaces", () => {
    expect(resolveVoice("eldric  sage", VOICES)).toEqual({ voice: "Eldric Sage", source: "model" });
    expect(resolveVoice("li", VOICES)).toEqual({ voice: "Li", source: "model" });
    expect(resolveVoice(" ONO ANNA ", VOICES)).toEqual({ voice: "Ono Anna", source: "model" });
  });

  it("turns every OpenAI voice into Cherry", () => {
    for (const name of [
      "alloy",
      "ash",
      "ballad",
      "coral",
      "echo",
      "fable",
      "onyx",
      "nova",
      "sage",
      "shimmer",
      "verse",
    ]) {
      expect(OPENAI_VOICES.has(name)).toBe(true);
      expect(resolveVoice(name, VOICES)).toEqual({
        voice: "Cherry",
        source: "openai",
        replaced: name,
      });
    }
    expect(resolveVoice(" Alloy\n", VOICES)).toEqual({
      voice: "Cherry",
      source: "openai",
      replaced: "alloy",
    });
  });

  it("knows nothing of other names", () => {
    expect(resolveVoice("Nobody", VOICES)).toBeUndefined();
    expect(resolveVoice("Serene", VOICES)).toBeUndefined();
  });

  it("takes any name for a model without a voice list", () => {
    expect(resolveVoice("Custom-Voice-1", undefined)).toEqual({
      voice: "Custom-Voice-1",
      source: "model",
    });
  });
});

describe("defaultVoice", () => {
  it("is Cherry, or the first voice of a list without Cherry", () => {
    expect(defaultVoice(VOICES)).toBe("Cherry");
    expect(defaultVoice(undefined)).toBe("Cherry");
    expect(defaultVoice(["Serena", "Ethan"])).toBe("Serena");
  });
});
