/**
 * @module sandbox/responses-field-rules
 * OpenAI's checks of the Responses API's optional top-level fields (pure), in its words:
 * `stream_options` (only `include_obfuscation`), `metadata` (16 pairs, 64-character keys,
 * 512-character values), `include` (a closed list), `truncation`, `tool_choice` (its three
 * strings or an object with a name: Chat's nested shape is refused), a non-default
 * `temperature`/`top_p` on a reasoning model, and JSON mode without the word "json" in an
 * input message (`instructions` does not count).
 */
import { isRecord } from "./chat-request.ts";
import { isOpenAIReasoningModel } from "./openai-model-rules.ts";

export interface FieldProblem {
  message: string;
  param: string | null;
  code: string | null;
}

const INCLUDABLE = new Set([
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
]);

const TOOL_CHOICES = ["none", "auto", "required"];

const quoted = (values: readonly string[]) =>
  values
    .map((value) => `'${value}'`)
    .join(", ")
    .replace(/, ([^,]*)$/, " and $1");

function invalidValue(value: unknown, supported: readonly string[], param: string): FieldProblem {
  return {
    message: `Invalid value: '${String(value)}'. Supported values are: ${quoted(supported)}.`,
    param,
    code: "invalid_value",
  };
}

function metadataProblem(metadata: unknown): FieldProblem | undefined {
  if (!isRecord(metadata)) return undefined;
  const entries = Object.entries(metadata);
  if (entries.length > 16) {
    return {
      message: `Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`,
      param: "metadata",
      code: "object_above_max_properties",
    };
  }
  for (const [key, value] of entries) {
    if (key.length > 64) {
      return {
        message: `Invalid 'metadata': key too long. Expected a key with maximum length 64, but got a key with length ${key.length} instead.`,
        param: "metadata",
        code: "string_above_max_length",
      };
    }
    if (typeof value === "string" && value.length > 512) {
      return {
        message: `Invalid 'metadata.${key}': string too long. Expected a string with maximum length 512, but got a string with length ${value.length} instead.`,
        param: `metadata.${key}`,
        code: "string_above_max_length",
      };
    }
  }
  return undefined;
}

function toolChoiceProblem(choice: unknown): FieldProblem | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === "string") {
    return TOOL_CHOICES.includes(choice)
      ? undefined
      : invalidValue(choice, TOOL_CHOICES, "tool_choice");
  }
  if (isRecord(choice) && choice.type === "function" && typeof choice.name !== "string") {
    return {
      message: "Missing required parameter: 'tool_choice.name'.",
      param: "tool_choice.name",
      code: "missing_required_parameter",
    };
  }
  return undefined;
}

/** The text of the input's messages (not `instructions`), for JSON mode's "json" rule. */
function inputMessagesText(input: unknown): string {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  let text = "";
  for (const item of input) {
    if (!isRecord(item) || (item.type !== undefined && item.type !== "message")) continue;
    text += ` ${JSON.stringify(item.content ?? "")}`;
  }
  return text;
}

/** The first of these rules `body` breaks, in OpenAI's order; `undefined` when none. */
export function responsesFieldProblem(body: Record<string, unknown>): FieldProblem | undefined {
  if (body.model === "") {
    return {
      message: "The requested model '' does not exist.",
      param: "model",
      code: "model_not_found",
    };
  }
  if (isRecord(body.stream_options)) {
    for (const key of Object.keys(body.stream_options)) {
      if (key !== "include_obfuscation") {
        return {
          message: `Unknown parameter: 'stream_options.${key}'.`,
          param: `stream_options.${key}`,
          code: "unknown_parameter",
        };
      }
    }
  }
  const metadata = metadataProblem(body.metadata);
  if (metadata) return metadata;
  if (Array.isArray(body.include)) {
    for (const [index, member] of body.include.entries()) {
      if (!INCLUDABLE.has(String(member)))
        return invalidValue(member, [...INCLUDABLE], `include[${index}]`);
    }
  }
  if (
    body.truncation !== undefined &&
    body.truncation !== null &&
    body.truncation !== "auto" &&
    body.truncation !== "disabled"
  )
    return invalidValue(body.truncation, ["auto", "disabled"], "truncation");
  const choice = toolChoiceProblem(body.tool_choice);
  if (choice) return choice;
  if (typeof body.model === "string" && isOpenAIReasoningModel(body.model)) {
    for (const [name, neutral] of [
      ["temperature", 1],
      ["top_p", 1],
    ] as const) {
      const value = body[name];
      if (value !== undefined && value !== null && value !== neutral) {
        return {
          message: `Unsupported parameter: '${name}' is not supported with this model.`,
          param: name,
          code: null,
        };
      }
    }
  }
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  if (format?.type === "json_object" && !/json/i.test(inputMessagesText(body.input))) {
    return {
      message:
        "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
      param: "input",
      code: null,
    };
  }
  return undefined;
}
