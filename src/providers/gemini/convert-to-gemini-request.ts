/**
 * @module providers/gemini/convert-to-gemini-request
 * Builds the `generateContent` body from normalized call options. `generationConfig` gets the
 * token cap, temperature, top-p, stop sequences (at most 5), penalties and seed; `json_object`
 * sets `responseMimeType: "application/json"` and `json_schema` adds `responseSchema` (converted
 * like tool parameters). `reasoning_effort` from `extraBody` becomes `thinkingConfig` with the
 * budgets of Google's own OpenAI-compatible endpoint (none 0, low 1024, medium 8192, high 24576),
 * asking for thought summaries unless it is `none`. Settings Gemini has no place for (`user`,
 * more than one choice, other `extraBody` fields) are dropped with a warning, and so are the
 * sampling settings the model takes only at their default (`modelRules.fixedSampling`: Gemini
 * 2.5 and later refuse penalties, "Penalty is not enabled for models/…").
 * @see https://ai.google.dev/api/generate-content#v1beta.GenerationConfig
 * @see https://ai.google.dev/gemini-api/docs/openai#thinking
 */
import type { CallWarning, ChatCallOptions, SamplingSetting } from "../../spec/index.ts";
import { convertJsonSchemaToGemini } from "./convert-json-schema-to-gemini.ts";
import { checksThoughtSignatures, convertToGeminiContents } from "./convert-to-gemini-contents.ts";
import { prepareGeminiTools } from "./gemini-prepare-tools.ts";

/** Gemini accepts at most this many stop sequences. */
export const MAX_STOP_SEQUENCES = 5;

export const THINKING_BUDGETS: Record<string, number> = {
  none: 0,
  low: 1024,
  medium: 8192,
  high: 24576,
};

export interface GeminiRequest {
  body: Record<string, unknown>;
  warnings: CallWarning[];
}

function thinkingConfig(
  effort: unknown,
  warnings: CallWarning[],
): Record<string, unknown> | undefined {
  if (typeof effort === "string" && effort in THINKING_BUDGETS) {
    const thinkingBudget = THINKING_BUDGETS[effort];
    return effort === "none" ? { thinkingBudget } : { thinkingBudget, includeThoughts: true };
  }
  warnings.push({
    type: "unsupported",
    setting: "reasoning_effort",
    details: `expected one of ${Object.keys(THINKING_BUDGETS).join(", ")}`,
  });
  return undefined;
}

export function convertToGeminiRequest(options: ChatCallOptions): GeminiRequest {
  const prompt = convertToGeminiContents(options.messages, {
    signFunctionCalls: checksThoughtSignatures(options.upstreamModel),
  });
  const tools = prepareGeminiTools(options.tools, options.toolChoice);
  const warnings: CallWarning[] = [...prompt.warnings, ...tools.warnings];
  const config: Record<string, unknown> = {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined) config[key] = value;
  };
  const fixed = options.modelRules?.fixedSampling ?? [];
  /** A sampling value, unless the model takes that setting only at its default. */
  const sampling = (setting: SamplingSetting, value: number | undefined, fallback: number) => {
    if (value === undefined || !fixed.includes(setting)) return value;
    if (value !== fallback)
      warnings.push({ type: "unsupported", setting, details: "the model takes only its default" });
    return undefined;
  };
  set("maxOutputTokens", options.maxOutputTokens);
  set("temperature", sampling("temperature", options.temperature, 1));
  set("topP", sampling("top_p", options.topP, 1));
  if (options.stop?.length) {
    if (options.stop.length > MAX_STOP_SEQUENCES)
      warnings.push({
        type: "compatibility",
        setting: "stop",
        details: `Gemini takes at most ${MAX_STOP_SEQUENCES} stop sequences; the rest were dropped`,
      });
    config.stopSequences = options.stop.slice(0, MAX_STOP_SEQUENCES);
  }
  set("presencePenalty", sampling("presence_penalty", options.presencePenalty, 0));
  set("frequencyPenalty", sampling("frequency_penalty", options.frequencyPenalty, 0));
  set("seed", options.seed);
  const format = options.responseFormat;
  if (format?.type === "json_object" || format?.type === "json_schema") {
    config.responseMimeType = "application/json";
    const schema =
      format.type === "json_schema" ? convertJsonSchemaToGemini(format.schema) : undefined;
    if (schema) config.responseSchema = schema;
  }
  if (options.user !== undefined) warnings.push({ type: "unsupported", setting: "user" });
  if ((options.choiceCount ?? 1) > 1)
    warnings.push({ type: "unsupported", setting: "n", details: "one choice per request" });
  for (const [key, value] of Object.entries(options.extraBody ?? {})) {
    if (key === "reasoning_effort") set("thinkingConfig", thinkingConfig(value, warnings));
    else warnings.push({ type: "unsupported", setting: key });
  }
  return {
    body: {
      contents: prompt.contents,
      ...(prompt.systemInstruction ? { systemInstruction: prompt.systemInstruction } : {}),
      ...(tools.tools ? { tools: tools.tools } : {}),
      ...(tools.toolConfig ? { toolConfig: tools.toolConfig } : {}),
      ...(Object.keys(config).length ? { generationConfig: config } : {}),
    },
    warnings,
  };
}
