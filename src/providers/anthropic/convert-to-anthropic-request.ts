/**
 * @module providers/anthropic/convert-to-anthropic-request
 * Builds the Messages API request body from normalized call options, with a warning for every
 * setting that is changed or dropped:
 * - `max_tokens` is required: `maxOutputTokens`, else {@link DEFAULT_MAX_TOKENS} (with thinking
 *   on, the thinking budget is added on top, since it is spent out of `max_tokens`, up to the
 *   model's output limit `modelRules.outputLimit`, which Anthropic refuses to exceed; a budget
 *   that does not fit below it is lowered, or thinking dropped when under Anthropic's minimum);
 * - `stop` → `stop_sequences`, `topP` → `top_p`, `user` → `metadata.user_id`;
 * - `temperature` above Anthropic's maximum of 1 is clamped (compatibility warning);
 * - `top_p` is dropped when `temperature` is set too (Anthropic's newer models refuse both
 *   together: "`temperature` and `top_p` cannot both be specified for this model");
 * - presence/frequency penalties, `seed` and more than one choice (`n`) are unsupported
 *   (warnings);
 * - JSON output (`anthropic-json-output.ts`): `json_schema` as a forced output tool, `json_object`
 *   by instruction and a `{` prefill; the caller reads the answer back with `outputTool` and
 *   `prefill`;
 * - `extraBody`: `thinking` (Anthropic's own form, as its OpenAI compatibility layer accepts it)
 *   and `top_k` are passed on, `parallel_tool_calls: false` becomes `disable_parallel_tool_use`;
 *   every other extra field is dropped with an unsupported warning. With thinking on,
 *   `temperature`, `top_p` and `top_k` are dropped (Anthropic rejects them) with warnings.
 * @see https://docs.anthropic.com/en/api/messages
 */
import type { CallWarning, ChatCallOptions } from "../../spec/index.ts";
import type { AnthropicMessageParam, AnthropicRequestBody } from "./anthropic-api.ts";
import { applyJsonOutput, type OutputTool } from "./anthropic-json-output.ts";
import { prepareAnthropicTools } from "./anthropic-prepare-tools.ts";
import { convertToAnthropicMessages } from "./convert-to-anthropic-messages.ts";

export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicRequest {
  body: AnthropicRequestBody;
  warnings: CallWarning[];
  /** Text the assistant turn was prefilled with; it belongs in front of the answer. */
  prefill: string | undefined;
  /** The tool whose input is a `json_schema` answer. */
  outputTool?: OutputTool;
}

function thinkingBudget(thinking: Record<string, unknown> | undefined): number {
  return thinking?.type === "enabled" && typeof thinking.budget_tokens === "number"
    ? thinking.budget_tokens
    : 0;
}

/** Anthropic's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1_024;

/** Lowers `max_tokens` to the model's limit, keeping a thinking budget below it (or none). */
function fitOutputLimit(body: AnthropicRequestBody, limit: number, warnings: CallWarning[]): void {
  body.max_tokens = limit;
  warnings.push({
    type: "compatibility",
    setting: "max_tokens",
    details: `the cap with the thinking budget was lowered to ${limit}, the model's limit`,
  });
  const budget = thinkingBudget(body.thinking);
  if (budget < limit) return;
  if (limit - 1 >= MIN_THINKING_BUDGET) {
    body.thinking = { ...body.thinking, budget_tokens: limit - 1 };
  } else {
    delete body.thinking;
    warnings.push({ type: "unsupported", setting: "thinking", details: "no room for a budget" });
  }
}

/** The neutral value of `temperature` and `top_p`. */
const NEUTRAL = 1;

export function convertToAnthropicRequest(
  options: ChatCallOptions,
  stream: boolean,
): AnthropicRequest {
  const prompt = convertToAnthropicMessages(options.messages);
  const warnings: CallWarning[] = [...prompt.warnings];
  const { thinking: rawThinking, top_k, parallel_tool_calls, ...rest } = options.extraBody ?? {};
  for (const key of Object.keys(rest)) warnings.push({ type: "unsupported", setting: key });
  const thinking =
    typeof rawThinking === "object" && rawThinking !== null && !Array.isArray(rawThinking)
      ? (rawThinking as Record<string, unknown>)
      : undefined;
  const thinkingOn = thinking !== undefined && thinking.type !== "disabled";

  const body: AnthropicRequestBody = {
    model: options.upstreamModel,
    max_tokens: (options.maxOutputTokens ?? DEFAULT_MAX_TOKENS) + thinkingBudget(thinking),
    messages: prompt.messages,
  };
  if (thinking) body.thinking = thinking;
  const limit = options.modelRules?.outputLimit;
  if (limit !== undefined && body.max_tokens > limit) fitOutputLimit(body, limit, warnings);

  // A value of 1 is Anthropic's own default (and the chat spec's): it says nothing, so it is
  // left out rather than crowding out the other setting or drawing a thinking warning.
  const temperature = options.temperature === NEUTRAL ? undefined : options.temperature;
  const topP = options.topP === NEUTRAL ? undefined : options.topP;
  const both = temperature !== undefined && topP !== undefined;
  const sampling = {
    temperature:
      temperature ?? (topP === undefined && !thinkingOn ? options.temperature : undefined),
    top_p: both ? undefined : topP,
    top_k,
  };
  if (both && !thinkingOn)
    warnings.push({
      type: "unsupported",
      setting: "top_p",
      details: "dropped: Anthropic takes temperature or top_p, not both",
    });
  for (const [setting, value] of Object.entries(sampling)) {
    if (value === undefined || value === null) continue;
    if (thinkingOn) {
      warnings.push({ type: "unsupported", setting, details: "not allowed with thinking" });
    } else if (setting === "temperature" && typeof value === "number" && value > 1) {
      body.temperature = 1;
      warnings.push({
        type: "compatibility",
        setting,
        details: `${value} is above Anthropic's maximum; sent 1`,
      });
    } else if (typeof value === "number") {
      body[setting as "temperature" | "top_p" | "top_k"] = value;
    }
  }
  if (options.stop?.length) body.stop_sequences = options.stop;
  if (options.presencePenalty !== undefined) {
    warnings.push({ type: "unsupported", setting: "presence_penalty" });
  }
  if (options.frequencyPenalty !== undefined) {
    warnings.push({ type: "unsupported", setting: "frequency_penalty" });
  }
  if (options.seed !== undefined) warnings.push({ type: "unsupported", setting: "seed" });
  if ((options.choiceCount ?? 1) > 1)
    warnings.push({ type: "unsupported", setting: "n", details: "one choice per request" });
  if (options.user) body.metadata = { user_id: options.user };

  const tools = prepareAnthropicTools({
    tools: options.tools,
    toolChoice: options.toolChoice,
    ...(typeof parallel_tool_calls === "boolean" ? { parallelToolCalls: parallel_tool_calls } : {}),
  });
  if (tools.tools) body.tools = tools.tools;
  if (tools.tool_choice) body.tool_choice = tools.tool_choice;
  else if (!tools.tools) {
    // A conversation with tool calls and no tools this turn (OpenAI answers it): Anthropic
    // refuses tool blocks without tools, so the tools the history names are defined, and not
    // to be called.
    const named = toolsNamedIn(prompt.messages);
    if (named.length > 0) {
      body.tools = named.map((name) => ({
        name,
        input_schema: { type: "object", properties: {} },
      }));
      body.tool_choice = { type: "none" };
    }
  }

  if (prompt.system !== undefined) body.system = prompt.system;
  const json = applyJsonOutput(body, options.responseFormat, { thinkingOn, warnings });
  if (stream) body.stream = true;
  return {
    body,
    warnings,
    prefill: json.prefill,
    ...(json.outputTool ? { outputTool: json.outputTool } : {}),
  };
}

/** The names of the tools a conversation's `tool_use` blocks call, each once. */
function toolsNamedIn(messages: AnthropicMessageParam[]): string[] {
  const names = new Set<string>();
  for (const message of messages)
    if (Array.isArray(message.content))
      for (const block of message.content) if (block.type === "tool_use") names.add(block.name);
  return [...names];
}
