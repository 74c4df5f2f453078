/**
 * @module sandbox/openai-responses-request
 * Validates an OpenAI Responses API request body (pure) the way OpenAI does — the first failing
 * check, in OpenAI's order and words: unknown top-level keys (`unknown_parameter`; `messages`
 * gets its own "moved to 'input'" message), then types and bounds (`missing_required_parameter`,
 * `invalid_type`; unknown members of input items and their parts, once `input` is a list,
 * from `responses-item-members.ts`; `integer_below_min_value`, chat-shaped tools), then the conversation
 * (a `function_call_output` needs its call: "No tool call found…"; a `previous_response_id`
 * is never found, the sandbox keeps nothing). A valid body is read into the chat request the
 * sandbox's reply planner takes, so both protocols answer the same words.
 */

import { type ChatMessage, type ChatRequest, type ChatTool, isRecord } from "./chat-request.ts";
import { responsesFieldProblem } from "./responses-field-rules.ts";
import { inputMembersProblem } from "./responses-item-members.ts";
import { strictSchemaProblem } from "./schema-instance.ts";

export interface ResponsesRequestError {
  status: number;
  message: string;
  param: string | null;
  code: string | null;
}

export type ResponsesRequestResult =
  | { ok: true; request: ChatRequest; body: Record<string, unknown> }
  | { ok: false; error: ResponsesRequestError };

/** Top-level keys of `POST /v1/responses` (OpenAI's CreateResponse). */
const KNOWN_KEYS = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "max_tool_calls",
  "temperature",
  "top_p",
  "top_logprobs",
  "frequency_penalty",
  "presence_penalty",
  "text",
  "reasoning",
  "stream",
  "stream_options",
  "store",
  "previous_response_id",
  "metadata",
  "include",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "truncation",
  "background",
  "service_tier",
  "conversation",
  "prompt",
]);

function fail(message: string, param: string | null, code: string | null, status = 400) {
  return { ok: false as const, error: { status, message, param, code } };
}

/** OpenAI's checks of `text.format: {type: "json_schema"}`, strict mode included. */
function textFormatProblem(format: Record<string, unknown>) {
  if (typeof format.name !== "string") {
    return fail(
      "Missing required parameter: 'text.format.name'.",
      "text.format.name",
      "missing_required_parameter",
    );
  }
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(format.name)) {
    return fail(
      "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      "text.format.name",
      "invalid_value",
    );
  }
  const problem = format.strict === true ? strictSchemaProblem(format.schema ?? {}) : undefined;
  if (!problem) return undefined;
  return fail(
    `Invalid schema for response_format '${format.name}': ${problem}`,
    "text.format.schema",
    "invalid_json_schema",
  );
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function partsText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: "", images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === "input_image") images += 1;
    else if (typeof part.text === "string") texts.push(part.text);
    else if (typeof part.refusal === "string") texts.push(part.refusal);
  }
  return { text: texts.join("\n"), images };
}

function readItems(
  input: unknown[],
): { messages: ChatMessage[] } | { error: ResponsesRequestResult } {
  const messages: ChatMessage[] = [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [index, item] of input.entries()) {
    if (!isRecord(item)) {
      return {
        error: fail(
          `Invalid type for 'input[${index}]': expected an input item, but got ${typeName(item)} instead.`,
          `input[${index}]`,
          "invalid_type",
        ),
      };
    }
    const type = item.type ?? "message";
    if (type === "message") {
      if (item.role === "assistant" && typeof item.id === "string" && !item.id.startsWith("msg")) {
        return {
          error: fail(
            `Invalid 'input[${index}].id': '${item.id}'. Expected an ID that begins with 'msg'.`,
            `input[${index}].id`,
            "invalid_id_prefix",
          ),
        };
      }
      const { text, images } = partsText(item.content);
      messages.push({ role: String(item.role ?? "user"), text, imageCount: images });
    } else if (type === "function_call") {
      calls.add(String(item.call_id));
      messages.push({ role: "assistant", text: "", imageCount: 0 });
    } else if (type === "function_call_output") {
      if (!calls.has(String(item.call_id))) {
        return {
          error: fail(
            `No tool call found for function call output with call_id ${String(item.call_id)}.`,
            "input",
            null,
          ),
        };
      }
      answered.add(String(item.call_id));
      messages.push({ role: "tool", ...partsText(item.output), imageCount: 0 });
    } else if (type === "item_reference") {
      return {
        error: fail(`Item with id '${String(item.id)}' not found.`, "input", null, 404),
      };
    }
    // `reasoning` items carry nothing the reply depends on.
  }
  for (const call of calls) {
    if (!answered.has(call))
      return { error: fail(`No tool output found for function call ${call}.`, "input", null) };
  }
  return { messages };
}

function readTools(tools: unknown): { tools: ChatTool[] } | { error: ResponsesRequestResult } {
  if (tools === undefined || tools === null) return { tools: [] };
  if (!Array.isArray(tools)) {
    return {
      error: fail(
        `Invalid type for 'tools': expected an array, but got ${typeName(tools)} instead.`,
        "tools",
        "invalid_type",
      ),
    };
  }
  const out: ChatTool[] = [];
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool) || tool.type !== "function") continue;
    if (typeof tool.name !== "string") {
      const param = `tools[${index}].name`;
      return {
        error: fail(`Missing required parameter: '${param}'.`, param, "missing_required_parameter"),
      };
    }
    out.push({
      name: tool.name,
      parameters: isRecord(tool.parameters) ? tool.parameters : undefined,
    });
  }
  return { tools: out };
}

function readToolChoice(choice: unknown): ChatRequest["toolChoice"] {
  if (choice === "none") return "none";
  if (isRecord(choice) && choice.type === "function" && typeof choice.name === "string")
    return { name: choice.name };
  return undefined;
}

export function parseResponsesRequest(body: unknown): ResponsesRequestResult {
  if (!isRecord(body)) {
    return fail("The request body must be a JSON object.", null, "invalid_type");
  }
  if (body.messages !== undefined) {
    return fail(
      "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again with the new parameter.",
      null,
      "unsupported_parameter",
    );
  }
  for (const key of Object.keys(body)) {
    if (!KNOWN_KEYS.has(key)) return fail(`Unknown parameter: '${key}'.`, key, "unknown_parameter");
  }
  if (typeof body.model !== "string") {
    return fail("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  const input = body.input;
  if (typeof input !== "string" && !Array.isArray(input)) {
    return fail(
      `Invalid type for 'input': expected one of a string or array of input items, but got ${typeName(input)} instead.`,
      "input",
      "invalid_type",
    );
  }
  const member = Array.isArray(input) ? inputMembersProblem(input) : undefined;
  if (member) return fail(member.message, member.param, member.code);
  const cap = body.max_output_tokens;
  if (cap !== undefined && cap !== null) {
    if (typeof cap !== "number" || !Number.isInteger(cap)) {
      return fail(
        `Invalid type for 'max_output_tokens': expected an integer, but got ${typeName(cap)} instead.`,
        "max_output_tokens",
        "invalid_type",
      );
    }
    if (cap < 16) {
      return fail(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${cap} instead.`,
        "max_output_tokens",
        "integer_below_min_value",
      );
    }
  }
  const field = responsesFieldProblem(body);
  if (field) return fail(field.message, field.param, field.code);
  const tools = readTools(body.tools);
  if ("error" in tools) return tools.error;
  const items =
    typeof input === "string"
      ? { messages: [{ role: "user", text: input, imageCount: 0 }] }
      : readItems(input);
  if ("error" in items) return items.error;
  if (typeof body.previous_response_id === "string") {
    return fail(
      `Previous response with id '${body.previous_response_id}' not found.`,
      "previous_response_id",
      "previous_response_not_found",
    );
  }
  const instructions =
    typeof body.instructions === "string" && body.instructions
      ? [{ role: "system", text: body.instructions, imageCount: 0 }]
      : [];
  const text = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  if (text?.type === "json_schema") {
    const problem = textFormatProblem(text);
    if (problem) return problem;
  }
  return {
    ok: true,
    body,
    request: {
      model: body.model,
      messages: [...instructions, ...items.messages],
      rawMessages: [body.instructions ?? null, input],
      stream: body.stream === true,
      includeUsage: true,
      maxTokens: typeof cap === "number" ? cap : undefined,
      tools: tools.tools,
      toolChoice: readToolChoice(body.tool_choice),
      jsonObject: text?.type === "json_object",
      ...(text?.type === "json_schema" ? { jsonSchema: text.schema ?? {} } : {}),
    },
  };
}
