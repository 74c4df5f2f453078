/**
 * @module sandbox/gemini-model-rules
 * What the Gemini API refuses beyond the shape of a `generateContent` request, per model, with
 * Google's wording (pure):
 *
 * - `maxOutputTokens` above the model's output limit (`output-limits.ts`);
 * - `presencePenalty` or `frequencyPenalty` on Gemini 2.5 and later ("Penalty is not enabled
 *   for models/…");
 * - a thinking budget of 0 for the models that always think (`gemini-2.5-pro`, the Gemini 3 Pro
 *   models), and a budget outside 128–32,768 (or -1, dynamic) for `gemini-2.5-pro`.
 *
 * docs/sandbox.md lists these rules with their sources.
 * @see https://ai.google.dev/gemini-api/docs/thinking#set-budget
 */
import { outputLimitOf } from "./output-limits.ts";

/** The models that cannot stop thinking. */
function alwaysThinks(model: string): boolean {
  return /^gemini-(2\.5|3(\.\d+)?)-pro/.test(bareName(model));
}

/** Gemini 2.5 and later take no penalties. */
function refusesPenalties(model: string): boolean {
  return /^gemini-(2\.5|3)/.test(bareName(model));
}

function bareName(model: string): string {
  return model.toLowerCase().replace(/^models\//, "");
}

/** `gemini-2.5-pro`'s thinking budget range (besides -1, dynamic thinking). */
const PRO_BUDGET = { min: 128, max: 32_768 };

/** The message Google refuses this (well-formed) request with, if any. */
export function geminiRefusal(
  model: string,
  settings: {
    maxOutputTokens: number | undefined;
    thinkingBudget: number | undefined;
    penalties: boolean;
  },
): string | undefined {
  const limit = outputLimitOf(model);
  const cap = settings.maxOutputTokens;
  if (limit !== undefined && cap !== undefined && cap > limit) {
    return `Unable to submit request because it has a maxOutputTokens value of ${cap} but the supported range is from 1 (inclusive) to ${limit + 1} (exclusive). Update the value and try again.`;
  }
  if (settings.penalties && refusesPenalties(model))
    return `Penalty is not enabled for models/${bareName(model)}`;
  const budget = settings.thinkingBudget;
  if (budget === undefined || budget === -1) return undefined;
  if (budget === 0 && alwaysThinks(model))
    return "Budget 0 is invalid. This model only works in thinking mode.";
  const pro25 = /^gemini-2\.5-pro/.test(bareName(model));
  if (pro25 && (budget < PRO_BUDGET.min || budget > PRO_BUDGET.max))
    return `The thinking budget (${budget}) is invalid.`;
  return undefined;
}

/** Whether a model signs its function calls and checks them when replayed (Gemini 3 on). */
export function signsFunctionCalls(model: string): boolean {
  return /^gemini-([3-9]|\d{2,})/.test(model);
}
