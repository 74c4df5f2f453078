/**
 * @module sandbox/chat-request
 * Validates an OpenAI Chat Completions request body (pure) and normalizes the parts the sandbox
 * looks at: message texts and image counts, stream flags, token cap, number of choices, tools and
 * response format. Validation failures carry OpenAI's own message/param/code wording.
 */
import { conversationError, settingsError } from "./chat-conversation-rules.ts";
import { strictSchemaProblem } from "./schema-instance.ts";

export type JsonRecord = Record<string, unknown>;

export interface ChatMessage {
  role: string;
  /** All text of the message (text parts joined by newlines). */
  text: string;
  imageCount: number;
}

export interface ChatTool {
  name: string;
  parameters: JsonRecord | undefined;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** The messages exactly as sent, for hashing. */
  rawMessages: readonly unknown[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  /** Choices asked for (`n`, OpenAI protocol); 1 when absent. */
  choiceCount?: number;
  tools: ChatTool[];
  /** "none", "auto"/"required" (as `undefined`), or the name of a forced function. */
  toolChoice: "none" | { name: string } | undefined;
  jsonObject: boolean;
  /** `response_format: {type: "json_schema"}`: the schema the reply is an instance of. */
  jsonSchema?: unknown;
}

export interface ChatRequestError {
  message: string;
  param: string | null;
  code: string | null;
}

export type ChatRequestResult =
  | { ok: true; request: ChatRequest }
  | { ok: false; error: ChatRequestError };

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(message: string, param: string | null, code: string | null): ChatRequestResult {
  return { ok: false, error: { message, param, code } };
}

/** OpenAI's checks of `response_format: {type: "json_schema"}`, strict mode included. */
function readJsonSchema(
  format: JsonRecord,
):
  | { schema: unknown }
  | { error: { message: string; param: string; code: string | null } }
  | undefined {
  if (format.type !== "json_schema") return undefined;
  const spec = isRecord(format.json_schema) ? format.json_schema : undefined;
  if (!spec) {
    return {
      error: {
        message: "Missing required parameter: 'response_format.json_schema'.",
        param: "response_format.json_schema",
        code: "missing_required_parameter",
      },
    };
  }
  if (typeof spec.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name)) {
    return {
      error: {
        message:
          "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        param: "response_format.json_schema.name",
        code: "invalid_value",
      },
    };
  }
  const schema = spec.schema ?? {};
  const problem = spec.strict === true ? strictSchemaProblem(schema) : undefined;
  if (problem) {
    return {
      error: {
        message: `Invalid schema for response_format '${spec.name}': ${problem}`,
        param: "response_format",
        code: null,
      },
    };
  }
  return { schema };
}

function normalizeMessage(raw: JsonRecord): ChatMessage {
  const role = typeof raw.role === "string" ? raw.role : "";
  const { content } = raw;
  if (typeof content === "string") return { role, text: content, imageCount: 0 };
  const texts: string[] = [];
  let imageCount = 0;
  if (Array.isArray(content)) {
    for (const part of content) {
      if (!isRecord(part)) continue;
      if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
      if (part.type === "image_url") imageCount++;
    }
  }
  return { role, text: texts.join("\n"), imageCount };
}

function normalizeTools(raw: unknown): ChatTool[] {
  if (!Array.isArray(raw)) return [];
  const tools: ChatTool[] = [];
  for (const tool of raw) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue;
    const { name, parameters } = tool.function;
    if (typeof name !== "string" || name === "") continue;
    tools.push({ name, parameters: isRecord(parameters) ? parameters : undefined });
  }
  return tools;
}

function normalizeToolChoice(raw: unknown): ChatRequest["toolChoice"] {
  if (raw === "none") return "none";
  if (isRecord(raw) && isRecord(raw.function) && typeof raw.function.name === "string") {
    return { name: raw.function.name };
  }
  return undefined;
}

/** The token cap (`max_completion_tokens` wins over `max_tokens`), or the error for a bad one. */
function readMaxTokens(body: JsonRecord): number | undefined | ChatRequestError {
  for (const param of ["max_completion_tokens", "max_tokens"] as const) {
    const value = body[param];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      return {
        message: `Invalid type for '${param}': expected an integer.`,
        param,
        code: "invalid_type",
      };
    }
    if (value < 1) {
      const message = `Invalid '${param}': integer below minimum value. Expected a value >= 1, but got ${value} instead.`;
      return { message, param, code: "integer_below_min_value" };
    }
    return value;
  }
  return undefined;
}

/** The number of choices (`n`, default 1), or the error for a bad one. */
function readChoiceCount(body: JsonRecord): number | ChatRequestError {
  const value = body.n;
  if (value === undefined || value === null) return 1;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    return {
      message: "Invalid type for 'n': expected an integer.",
      param: "n",
      code: "invalid_type",
    };
  }
  if (value < 1) {
    const message = `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${value} instead.`;
    return { message, param: "n", code: "integer_below_min_value" };
  }
  return value;
}

/** Validates and normalizes a chat request body. */
export function parseChatRequest(body: unknown): ChatRequestResult {
  if (!isRecord(body)) return fail("The request body must be a JSON object.", null, null);
  const { model, messages } = body;
  if (typeof model !== "string" || model === "") {
    return fail("you must provide a model parameter", null, null);
  }
  if (messages === undefined || messages === null) {
    return fail(
      "Missing required parameter: 'messages'.",
      "messages",
      "missing_required_parameter",
    );
  }
  if (!Array.isArray(messages)) {
    return fail("Invalid type for 'messages': expected an array.", "messages", "invalid_type");
  }
  if (messages.length === 0) {
    return fail("[] is too short - 'messages'", "messages", null);
  }
  const normalized: ChatMessage[] = [];
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message)) {
      return fail(
        `Invalid type for 'messages[${i}]': expected an object.`,
        `messages[${i}]`,
        "invalid_type",
      );
    }
    if (typeof message.role !== "string") {
      return fail(
        `Missing required parameter: 'messages[${i}].role'.`,
        `messages[${i}].role`,
        "missing_required_parameter",
      );
    }
    normalized.push(normalizeMessage(message));
  }
  const broken = conversationError(messages as JsonRecord[]) ?? settingsError(body);
  if (broken) return { ok: false, error: broken };
  const maxTokens = readMaxTokens(body);
  if (typeof maxTokens === "object") return { ok: false, error: maxTokens };
  const choiceCount = readChoiceCount(body);
  if (typeof choiceCount === "object") return { ok: false, error: choiceCount };
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  const responseFormat = isRecord(body.response_format) ? body.response_format : {};
  const jsonSchema = readJsonSchema(responseFormat);
  if (jsonSchema && "error" in jsonSchema) return { ok: false, error: jsonSchema.error };
  return {
    ok: true,
    request: {
      model,
      messages: normalized,
      rawMessages: messages,
      stream: body.stream === true,
      includeUsage: body.stream === true && streamOptions.include_usage === true,
      maxTokens,
      ...(choiceCount > 1 ? { choiceCount } : {}),
      tools: normalizeTools(body.tools),
      toolChoice: normalizeToolChoice(body.tool_choice),
      jsonObject: responseFormat.type === "json_object",
      ...(jsonSchema ? { jsonSchema: jsonSchema.schema } : {}),
    },
  };
}
