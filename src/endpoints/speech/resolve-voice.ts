/**
 * @module endpoints/speech/resolve-voice
 * Which vendor voice a request gets (pure): the model's own voice names (exact, or ignoring case
 * and extra spaces), the default `Cherry` when none is given, `Cherry` again for OpenAI's voice
 * names, and nothing (a 400) for any other name.
 */

export const DEFAULT_VOICE = "Cherry";

/** OpenAI's built-in voices: a client written for OpenAI gets the default voice instead. */
export const OPENAI_VOICES: ReadonlySet<string> = new Set([
  "alloy",
  "ash",
  "ballad",
  "cedar",
  "coral",
  "echo",
  "fable",
  "marin",
  "nova",
  "onyx",
  "sage",
  "shimmer",
  "verse",
]);

export interface ResolvedVoice {
  voice: string;
  /** `default`: none asked; `model`: a voice of the model; `openai`: an OpenAI name, replaced. */
  source: "default" | "model" | "openai";
  /** The OpenAI voice that was asked for (lower case), when `source` is `openai`. */
  replaced?: string;
}

function normalize(name: string): string {
  return name.trim().replace(/\s+/g, " ").toLowerCase();
}

/** `Cherry`, or the model's first voice when its list lacks `Cherry`. */
export function defaultVoice(voices: readonly string[] | undefined): string {
  if (!voices || voices.length === 0 || voices.includes(DEFAULT_VOICE)) return DEFAULT_VOICE;
  return voices[0] ?? DEFAULT_VOICE;
}

/**
 * The voice to send upstream, or `undefined` when the name is unknown. A model without a voice
 * list in the catalog takes any name as is.
 */
export function resolveVoice(
  requested: string | undefined,
  voices: readonly string[] | undefined,
): ResolvedVoice | undefined {
  if (requested === undefined || requested.trim() === "") {
    return { voice: defaultVoice(voices), source: "default" };
  }
  if (!voices || voices.length === 0) return { voice: requested, source: "model" };
  if (voices.includes(requested)) return { voice: requested, source: "model" };
  const wanted = normalize(requested);
  const match = voices.find((voice) => normalize(voice) === wanted);
  if (match) return { voice: match, source: "model" };
  if (OPENAI_VOICES.has(wanted)) {
    return { voice: defaultVoice(voices), source: "openai", replaced: wanted };
  }
  return undefined;
}
