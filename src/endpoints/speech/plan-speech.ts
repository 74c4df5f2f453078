/**
 * @module endpoints/speech/plan-speech
 * The model's own rules for a speech request (pure), checked before any money is held: text to
 * speak, a known voice, `instructions` only where the model takes them. Also decides what the
 * client gets: the voice, the container (a model that only makes WAV answers WAV whatever was
 * asked) and the warnings sent in `x-switchyard-warnings`.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { CallWarning } from "../../spec/index.ts";
import type { OutputFormat } from "./audio-container.ts";
import { type ResolvedVoice, resolveVoice } from "./resolve-voice.ts";
import type { SpeechRequest } from "./schema.ts";

export interface SpeechPlan {
  voice: ResolvedVoice;
  /** The container the client gets. */
  format: OutputFormat;
  instructions?: string;
  warnings: CallWarning[];
}

const FORMATS: readonly OutputFormat[] = ["mp3", "wav"];

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError("invalid_parameter", { detail }, { param });
}

/** The formats the catalog lists for the model (both when it lists none). */
export function modelFormats(model: CatalogModel): OutputFormat[] {
  const listed = model.capabilities?.audio_formats;
  const known = FORMATS.filter((format) => !listed || listed.includes(format));
  return known.length > 0 ? known : ["wav"];
}

function listVoices(voices: readonly string[]): string {
  return voices.map((voice) => `'${voice}'`).join(", ");
}

export function planSpeech(body: SpeechRequest, model: CatalogModel): SpeechPlan {
  if (body.input.trim() === "") {
    throw invalid("input", "Invalid 'input': the text to speak is empty.");
  }
  const voices = model.capabilities?.voices;
  const voice = resolveVoice(body.voice, voices);
  if (!voice) {
    throw invalid(
      "voice",
      `Invalid 'voice': '${body.voice}' is not a voice of ${model.id}. Use one of ${listVoices(voices ?? [])}; OpenAI voice names fall back to 'Cherry'.`,
    );
  }
  const takesInstructions = model.capabilities?.instructions === true;
  if (body.instructions !== undefined && body.instructions.trim() !== "" && !takesInstructions) {
    throw invalid(
      "instructions",
      `Invalid 'instructions': ${model.id} does not take instructions; use an instruct model such as tts3-instruct-flash.`,
    );
  }

  const warnings: CallWarning[] = [];
  const formats = modelFormats(model);
  const asked = body.response_format ?? "mp3";
  const format = formats.includes(asked) ? asked : (formats[0] ?? "wav");
  if (body.response_format !== undefined && format !== asked) {
    warnings.push({
      type: "compatibility",
      setting: "response_format",
      details: `${model.id} always returns ${format}`,
    });
  }
  if (voice.source === "openai") {
    warnings.push({
      type: "compatibility",
      setting: "voice",
      details: `'${voice.replaced}' is an OpenAI voice; using '${voice.voice}'`,
    });
  }
  if (body.speed !== undefined && body.speed !== 1) {
    warnings.push({
      type: "unsupported",
      setting: "speed",
      details: takesInstructions ? "has no effect; describe the pace in instructions" : "ignored",
    });
  }
  return {
    voice,
    format,
    ...(takesInstructions && body.instructions?.trim()
      ? { instructions: body.instructions.trim() }
      : {}),
    warnings,
  };
}
