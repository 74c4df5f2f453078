/**
 * @module providers/openai-compatible/convert-to-openai-request
 * Builds the OpenAI chat completions request body from normalized call options. Of the fields
 * the normalized options do not model (`extraBody`), only those this protocol knows are passed
 * on (`CHAT_EXTRA_FIELDS` of src/spec); any other is dropped with an unsupported warning, so nothing
 * reaches the vendor that the gateway did not decide to send.
 *
 * The model's rules (`modelRules`, from the catalog) shape the body as its vendor requires: the
 * output cap goes in `max_completion_tokens` where `max_tokens` is refused (OpenAI's o-series and
 * GPT-5 family), and the sampling settings the model takes only at their default (temperature
 * and top_p 1, no penalties, no logprobs) are not sent otherwise (each dropped with a warning).
 * `choiceCount` above 1 is sent as `n`.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 * @see https://platform.openai.com/docs/guides/reasoning
 */
import {
  type CallWarning,
  CHAT_EXTRA_FIELDS,
  type ChatCallOptions,
  type ChatContentPart,
  type ChatMessage,
  type SamplingSetting,
} from "../../spec/index.ts";

export interface OpenAIRequest {
  body: Record<string, unknown>;
  warnings: CallWarning[];
}

type OpenAIContent =
  | string
  | Array<
      | { type: "text"; text: string }
      | { type: "image_url"; image_url: { url: string; detail?: string } }
    >;

function convertContent(content: string | ChatContentPart[]): OpenAIContent {
  if (typeof content === "string") return content;
  return content.map((part) =>
    part.type === "text"
      ? { type: "text" as const, text: part.text }
      : {
          type: "image_url" as const,
          image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) },
        },
  );
}

export function convertToOpenAIMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "tool":
      return {
        role: "tool",
        tool_call_id: message.toolCallId,
        content: convertContent(message.content),
      };
    case "assistant":
      return {
        role: "assistant",
        content: message.content === null ? null : convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    default:
      return {
        role: message.role,
        content: convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
      };
  }
}

/** The extra fields that go with `logprobs`, refused with it. */
const LOGPROB_FIELDS = ["logprobs", "top_logprobs", "logit_bias"];

const FIXED_SAMPLING = "the model takes only its default";

/** Sampling settings and their defaults. */
const SAMPLING_DEFAULTS = { temperature: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0 };
type Sampling = Partial<Record<keyof typeof SAMPLING_DEFAULTS, number>>;

/**
 * What is sent of the settings a model takes only at their default: temperature and top_p at
 * 1, never a penalty; any other value is left out with a warning.
 */
function fixedSampling(
  sampling: Sampling,
  fixed: readonly SamplingSetting[],
  warnings: CallWarning[],
): Sampling {
  const sent: Sampling = { ...sampling };
  for (const setting of Object.keys(SAMPLING_DEFAULTS) as Array<keyof Sampling>) {
    const value = sampling[setting];
    if (value === undefined || !fixed.includes(setting)) continue;
    if (value !== SAMPLING_DEFAULTS[setting])
      warnings.push({ type: "unsupported", setting, details: FIXED_SAMPLING });
    if (value !== SAMPLING_DEFAULTS[setting] || setting.endsWith("_penalty")) delete sent[setting];
  }
  return sent;
}

export function convertToOpenAIRequest(options: ChatCallOptions, stream: boolean): OpenAIRequest {
  const warnings: CallWarning[] = [];
  const body: Record<string, unknown> = {};
  const rules = options.modelRules;
  const fixed = rules?.fixedSampling ?? [];
  for (const [key, value] of Object.entries(options.extraBody ?? {})) {
    if (fixed.includes("logprobs") && LOGPROB_FIELDS.includes(key) && value !== false)
      warnings.push({ type: "unsupported", setting: key, details: FIXED_SAMPLING });
    else if (CHAT_EXTRA_FIELDS.has(key)) body[key] = value;
    else warnings.push({ type: "unsupported", setting: key });
  }
  body.model = options.upstreamModel;
  body.messages = options.messages.map(convertToOpenAIMessage);
  const set = (key: string, value: unknown) => {
    if (value !== undefined) body[key] = value;
  };
  const requested: Sampling = {
    temperature: options.temperature,
    top_p: options.topP,
    presence_penalty: options.presencePenalty,
    frequency_penalty: options.frequencyPenalty,
  };
  const sampling = fixed.length ? fixedSampling(requested, fixed, warnings) : requested;
  set(rules?.outputCapField ?? "max_tokens", options.maxOutputTokens);
  set("temperature", sampling.temperature);
  set("top_p", sampling.top_p);
  set("stop", options.stop);
  set("presence_penalty", sampling.presence_penalty);
  set("frequency_penalty", sampling.frequency_penalty);
  set("seed", options.seed);
  set("user", options.user);
  if (options.choiceCount !== undefined && options.choiceCount > 1) body.n = options.choiceCount;
  if (options.tools?.length) {
    body.tools = options.tools.map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        ...(tool.parameters ? { parameters: tool.parameters } : {}),
      },
    }));
  }
  if (options.toolChoice !== undefined) {
    body.tool_choice =
      typeof options.toolChoice === "string"
        ? options.toolChoice
        : { type: "function", function: { name: options.toolChoice.name } };
  }
  if (options.responseFormat) {
    const format = options.responseFormat;
    body.response_format =
      format.type === "json_schema"
        ? {
            type: "json_schema",
            json_schema: { name: format.name, schema: format.schema, strict: format.strict },
          }
        : { type: format.type };
  }
  if (stream) {
    body.stream = true;
    // Always ask for usage so every stream can be metered; the endpoint hides it if unasked.
    body.stream_options = { include_usage: true };
  }
  return { body, warnings };
}
