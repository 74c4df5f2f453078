/**
 * @module sandbox/anthropic-model-rules
 * What the Messages API refuses beyond the shape of a request, per model, with Anthropic's own
 * wording (pure). Checked after the body's shape (`anthropic-request.ts`):
 *
 * - `max_tokens` above the model's output limit (`output-limits.ts`):
 *   `max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for …`;
 * - `temperature` together with `top_p` on Claude Opus 4.1 and on the 4.5 generation and later;
 * - with extended thinking on, a `temperature` other than 1.
 *
 * docs/sandbox.md lists these rules with their sources.
 * @see https://docs.anthropic.com/en/docs/about-claude/models/migrating-to-claude-4
 * @see https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
 */
import type { JsonRecord } from "./chat-request.ts";
import { outputLimitOf } from "./output-limits.ts";

const THINKING_TEMPERATURE =
  "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking";
const TEMPERATURE_WITH_TOP_P =
  "`temperature` and `top_p` cannot both be specified for this model. Please use only one.";

/** `claude-sonnet-4-5-20250929` → sonnet 4.5; a date in the minor place reads as 0. */
function claudeVersion(model: string): { tier: string; version: number } | undefined {
  const match = /^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d+))?/.exec(model.toLowerCase());
  if (!match) return undefined;
  const minor = match[3] && match[3].length < 8 ? Number(match[3]) : 0;
  return { tier: match[1]!, version: Number(match[2]) + minor / 10 };
}

/** Claude Opus 4.1 and every model from the 4.5 generation on take one of the two only. */
export function refusesTemperatureWithTopP(model: string): boolean {
  const claude = claudeVersion(model);
  if (!claude) return false;
  return claude.version >= 4.5 || (claude.tier === "opus" && claude.version >= 4.1);
}

/** The message Anthropic refuses this (well-formed) Messages request with, if any. */
export function anthropicRefusal(
  model: string,
  root: JsonRecord,
  options: { maxTokens: number | undefined; thinking: boolean },
): string | undefined {
  const limit = outputLimitOf(model);
  if (limit !== undefined && options.maxTokens !== undefined && options.maxTokens > limit) {
    return `max_tokens: ${options.maxTokens} > ${limit}, which is the maximum allowed number of output tokens for ${model}`;
  }
  const temperature = root.temperature;
  if (options.thinking && typeof temperature === "number" && temperature !== 1) {
    return THINKING_TEMPERATURE;
  }
  if (
    typeof temperature === "number" &&
    typeof root.top_p === "number" &&
    refusesTemperatureWithTopP(model)
  ) {
    return TEMPERATURE_WITH_TOP_P;
  }
  return undefined;
}
