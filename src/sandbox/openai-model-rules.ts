/**
 * @module sandbox/openai-model-rules
 * What the OpenAI-compatible vendors refuse beyond the shape of a chat request, by vendor (read
 * from the path prefix) and model family, with the vendor's own message, param and code (pure):
 *
 * - OpenAI's reasoning models (`o1`, `o3`, `o4` families and the GPT-5 family except the
 *   `*-chat-latest` models) refuse `max_tokens` (they take `max_completion_tokens`), a
 *   temperature or top_p other than 1, presence and frequency penalties, `logprobs`,
 *   `top_logprobs` and `logit_bias`. GPT-5.1 and later take temperature, top_p and logprobs
 *   when `reasoning_effort` is `none`.
 * - OpenAI refuses an output cap above the model's output limit (`output-limits.ts`) and more
 *   than 128 choices.
 * - Groq serves one choice only: `n` other than 1 is refused.
 *
 * docs/sandbox.md lists these rules with their sources.
 * @see https://platform.openai.com/docs/guides/reasoning
 * @see https://console.groq.com/docs/api-reference#chat-create
 */
import type { ChatRequestError, JsonRecord } from "./chat-request.ts";
import { outputLimitOf } from "./output-limits.ts";

/** The vendor an OpenAI-protocol path belongs to: its first segment (`/groq/openai/v1/…`). */
export function vendorOfPath(path: string): string {
  return path.split("/")[1] ?? "";
}

/** OpenAI's most choices per request. */
export const OPENAI_MAX_CHOICES = 128;

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** OpenAI's o-series and GPT-5 family, without the non-reasoning `*-chat-latest` models. */
export function isOpenAIReasoningModel(model: string): boolean {
  const name = model.toLowerCase();
  return /^o[134](-|$)/.test(name) || (/^gpt-5/.test(name) && !name.includes("-chat"));
}

function unsupportedParameter(param: string): ChatRequestError {
  return {
    message: `Unsupported parameter: '${param}' is not supported with this model.`,
    param,
    code: "unsupported_parameter",
  };
}

function unsupportedValue(param: string, value: unknown, fixed: number): ChatRequestError {
  return {
    message: `Unsupported value: '${param}' does not support ${String(value)} with this model. Only the default (${fixed}) value is supported.`,
    param,
    code: "unsupported_value",
  };
}

/** GPT-5.1 and later take sampling settings when they do not reason (`reasoning_effort: none`). */
function samplingAllowed(model: string, body: JsonRecord): boolean {
  return /^gpt-5\.\d/.test(model.toLowerCase()) && body.reasoning_effort === "none";
}

function reasoningModelRules(model: string, body: JsonRecord): ChatRequestError | undefined {
  if (present(body.max_tokens)) {
    return {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: "max_tokens",
      code: "unsupported_parameter",
    };
  }
  if (samplingAllowed(model, body)) return undefined;
  for (const param of ["temperature", "top_p"]) {
    const value = body[param];
    if (present(value) && value !== 1) return unsupportedValue(param, value, 1);
  }
  for (const param of ["presence_penalty", "frequency_penalty", "top_logprobs", "logit_bias"]) {
    if (present(body[param])) return unsupportedParameter(param);
  }
  if (body.logprobs === true) return unsupportedParameter("logprobs");
  return undefined;
}

function openAIRules(model: string, body: JsonRecord): ChatRequestError | undefined {
  if (isOpenAIReasoningModel(model)) {
    const refused = reasoningModelRules(model, body);
    if (refused) return refused;
  }
  if (typeof body.n === "number" && body.n > OPENAI_MAX_CHOICES) {
    return {
      message: `Invalid 'n': integer above maximum value. Expected a value <= ${OPENAI_MAX_CHOICES}, but got ${body.n} instead.`,
      param: "n",
      code: "integer_above_max_value",
    };
  }
  const limit = outputLimitOf(model);
  for (const param of ["max_completion_tokens", "max_tokens"]) {
    const cap = body[param];
    if (limit !== undefined && typeof cap === "number" && cap > limit) {
      return {
        message: `${param} is too large: ${cap}. This model supports at most ${limit} completion tokens, whereas you provided ${cap}.`,
        param,
        code: "invalid_value",
      };
    }
  }
  return undefined;
}

/** The error the vendor answers this (well-formed) chat request with, if any. */
export function vendorRefusal(
  vendor: string,
  model: string,
  body: JsonRecord,
): ChatRequestError | undefined {
  switch (vendor) {
    case "openai":
      return openAIRules(model, body);
    case "groq":
      return present(body.n) && body.n !== 1
        ? { message: "'n' : number must be at most 1", param: "n", code: null }
        : undefined;
    default:
      return undefined;
  }
}
