/**
 * @module sandbox/speech-request
 * Validation of a Qwen3-TTS request body (pure): the models, the per-model voice lists (the
 * instruct model has the 24-voice subset), `language_type`, the text limit, and `instructions`
 * read from `input` or `parameters` (public clients use both).
 */

export const TTS_MODELS = ["qwen3-tts-flash", "qwen3-tts-instruct-flash"] as const;
export type TtsModel = (typeof TTS_MODELS)[number];

/** Text limit of one request, in characters. */
export const MAX_TTS_CHARACTERS = 600;

// biome-ignore format: keep the voice table compact
export const INSTRUCT_VOICES: readonly string[] = [
  "Cherry", "Serena", "Ethan", "Chelsie", "Momo", "Vivian", "Moon", "Maia", "Kai", "Nofish",
  "Bella", "Eldric Sage", "Mia", "Mochi", "Bellona", "Vincent", "Bunny", "Neil", "Elias",
  "Arthur", "Nini", "Seren", "Pip", "Stella",
];

// biome-ignore format: keep the voice table compact
export const FLASH_VOICES: readonly string[] = [
  ...INSTRUCT_VOICES,
  "Jennifer", "Ryan", "Katerina", "Aiden", "Bodega", "Sonrisa", "Alek", "Dolce", "Sohee",
  "Ono Anna", "Lenn", "Emilien", "Andre", "Radio Gol", "Jada", "Dylan", "Li", "Marcus", "Roy",
  "Peter", "Sunny", "Eric", "Rocky", "Kiki", "Ebona",
];

export const LANGUAGE_TYPES = [
  "Auto",
  "Chinese",
  "English",
  "German",
  "Italian",
  "Portuguese",
  "Spanish",
  "Japanese",
  "Korean",
  "French",
  "Russian",
] as const;

export interface TtsRequest {
  model: TtsModel;
  text: string;
  voice: string;
  languageType: string;
  instructions?: string;
  /** Unicode code points of `text`: what `usage.characters` reports. */
  characters: number;
}

export interface TtsRequestError {
  code: string;
  message: string;
}

export type TtsParse = { ok: true; request: TtsRequest } | { ok: false; error: TtsRequestError };

const DATED_SNAPSHOT = /-\d{4}-\d{2}-\d{2}$/;

/** `qwen3-tts-flash-2025-09-18` → `qwen3-tts-flash`; unknown names → undefined. */
export function ttsModelOf(model: string): TtsModel | undefined {
  const base = model.replace(DATED_SNAPSHOT, "");
  return TTS_MODELS.find((known) => known === base);
}

export function voicesOf(model: TtsModel): readonly string[] {
  return model === "qwen3-tts-instruct-flash" ? INSTRUCT_VOICES : FLASH_VOICES;
}

function fail(code: string, message: string): TtsParse {
  return { ok: false, error: { code, message } };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function parseTtsRequest(body: Record<string, unknown>): TtsParse {
  const model = ttsModelOf(String(body.model));
  if (!model) return fail("InvalidParameter", "Model not exist.");
  const input = record(body.input);
  if (!input)
    return fail("BadRequest.EmptyInput", "Required input parameter missing from request.");
  const parameters = record(body.parameters) ?? {};
  const text = input.text;
  if (typeof text !== "string" || text.trim() === "") {
    return fail("InvalidParameter", "Input text must be a non-empty string.");
  }
  const characters = [...text].length;
  if (characters > MAX_TTS_CHARACTERS) {
    return fail("InvalidParameter", `Range of input length should be [1, ${MAX_TTS_CHARACTERS}]`);
  }
  const voice = input.voice ?? parameters.voice;
  if (typeof voice !== "string" || voice === "") {
    return fail("InvalidParameter", "Parameter voice is required.");
  }
  if (!voicesOf(model).includes(voice)) {
    return fail("InvalidParameter", `Voice '${voice}' is not supported by model ${model}.`);
  }
  const languageType = input.language_type ?? parameters.language_type ?? "Auto";
  if (
    typeof languageType !== "string" ||
    !(LANGUAGE_TYPES as readonly string[]).includes(languageType)
  ) {
    return fail(
      "InvalidParameter",
      `Parameter language_type must be one of ${LANGUAGE_TYPES.join(", ")}.`,
    );
  }
  const instructions = input.instructions ?? parameters.instructions;
  if (instructions !== undefined && typeof instructions !== "string") {
    return fail("InvalidParameter", "Parameter instructions must be a string.");
  }
  return {
    ok: true,
    request: {
      model,
      text,
      voice,
      languageType,
      characters,
      // Only the instruct model follows instructions; the basic one ignores them.
      ...(instructions && model === "qwen3-tts-instruct-flash" ? { instructions } : {}),
    },
  };
}
