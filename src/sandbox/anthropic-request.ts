/**
 * @module sandbox/anthropic-request
 * Validates an Anthropic Messages (or count_tokens) request body (pure) into typed parts. Failures
 * read like Anthropic's own: `<dotted path>: <problem>`, e.g. `messages.0.role: Input should be
 * 'user' or 'assistant'`. Unknown top-level fields (beta features) are accepted and ignored.
 * A well-formed Messages request is then held to the model's own rules (`anthropic-model-rules.ts`).
 * @see https://docs.anthropic.com/en/api/messages
 */
import { conversationRefusal } from "./anthropic-conversation-rules.ts";
import { anthropicRefusal } from "./anthropic-model-rules.ts";
import { isRecord, type JsonRecord } from "./chat-request.ts";

export type ImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string }
  | { type: "file"; file_id: string };

export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: ImageSource }
  | { type: "tool_use"; id: string; name: string; input: JsonRecord }
  | { type: "tool_result"; tool_use_id: string; content: string | AnthropicBlock[] }
  | { type: "thinking"; thinking: string }
  | { type: "redacted_thinking" }
  | { type: "document" }
  /** Server tool blocks (web search, MCP...) kept in history; the sandbox ignores them. */
  | { type: "other" };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicTool {
  name: string;
  inputSchema: JsonRecord | undefined;
}

export interface AnthropicRequest {
  model: string;
  /** Required for messages; absent for count_tokens. */
  maxTokens: number | undefined;
  /** All system text, blocks joined by newlines. */
  system: string | undefined;
  messages: AnthropicMessage[];
  tools: AnthropicTool[];
  toolChoice: { type: "auto" | "any" | "none" } | { type: "tool"; name: string } | undefined;
  stopSequences: string[];
  /** Extended thinking was asked for (`enabled` or `adaptive`). */
  thinking: boolean;
  stream: boolean;
}

export type AnthropicRequestResult =
  | { ok: true; request: AnthropicRequest }
  | { ok: false; message: string };

class InvalidRequest extends Error {}

function invalid(path: string, problem: string): never {
  throw new InvalidRequest(`${path}: ${problem}`);
}

const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const quoted = (values: readonly string[]) => values.map((value) => `'${value}'`).join(", ");
const EXPECTED_BLOCKS = quoted([
  "text",
  "image",
  "document",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
]);
const SERVER_BLOCK_TYPES = new Set([
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "search_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "container_upload",
]);

function record(value: unknown, path: string): JsonRecord {
  if (value === undefined) invalid(path, "Field required");
  if (!isRecord(value)) invalid(path, "Input should be a valid dictionary");
  return value;
}

function string(value: unknown, path: string): string {
  if (value === undefined) invalid(path, "Field required");
  if (typeof value !== "string") invalid(path, "Input should be a valid string");
  return value;
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined) invalid(path, "Field required");
  if (!Array.isArray(value)) invalid(path, "Input should be a valid list");
  return value;
}

function integer(value: unknown, path: string, min: number): number {
  if (value === undefined) invalid(path, "Field required");
  if (typeof value !== "number" || !Number.isInteger(value)) {
    invalid(path, "Input should be a valid integer");
  }
  if (value < min) invalid(path, `Input should be greater than or equal to ${min}`);
  return value;
}

function unitNumber(value: unknown, path: string): void {
  if (value === undefined) return;
  if (typeof value !== "number") invalid(path, "Input should be a valid number");
  if (value < 0 || value > 1) invalid(path, "Input should be between 0 and 1");
}

function imageSource(raw: unknown, path: string): ImageSource {
  const source = record(raw, path);
  switch (source.type) {
    case "base64": {
      const mediaType = string(source.media_type, `${path}.media_type`);
      if (!IMAGE_TYPES.includes(mediaType)) {
        invalid(`${path}.media_type`, `Input should be ${quoted(IMAGE_TYPES)}`);
      }
      return { type: "base64", media_type: mediaType, data: string(source.data, `${path}.data`) };
    }
    case "url":
      return { type: "url", url: string(source.url, `${path}.url`) };
    case "file":
      return { type: "file", file_id: string(source.file_id, `${path}.file_id`) };
    default:
      return invalid(`${path}.type`, "Input should be 'base64', 'url' or 'file'");
  }
}

function block(
  raw: unknown,
  path: string,
  role: AnthropicMessage["role"] | "tool",
): AnthropicBlock {
  const part = record(raw, path);
  const type = string(part.type, `${path}.type`);
  switch (type) {
    case "text":
      return { type, text: string(part.text, `${path}.text`) };
    case "image":
      return { type, source: imageSource(part.source, `${path}.source`) };
    case "document":
      record(part.source, `${path}.source`);
      return { type };
    case "tool_use":
      if (role !== "assistant")
        invalid(path, "tool_use blocks are only allowed in assistant turns");
      return {
        type,
        id: string(part.id, `${path}.id`),
        name: string(part.name, `${path}.name`),
        input: record(part.input, `${path}.input`),
      };
    case "tool_result": {
      if (role !== "user") invalid(path, "tool_result blocks are only allowed in user turns");
      const content =
        part.content === undefined || typeof part.content === "string"
          ? (part.content ?? "")
          : list(part.content, `${path}.content`).map((inner, i) =>
              block(inner, `${path}.content.${i}`, "tool"),
            );
      return { type, tool_use_id: string(part.tool_use_id, `${path}.tool_use_id`), content };
    }
    case "thinking":
      string(part.signature, `${path}.signature`);
      return { type, thinking: string(part.thinking, `${path}.thinking`) };
    case "redacted_thinking":
      string(part.data, `${path}.data`);
      return { type };
    default:
      if (SERVER_BLOCK_TYPES.has(type)) return { type: "other" };
      return invalid(
        path,
        `Input tag '${type}' found using 'type' does not match any of the expected tags: ${EXPECTED_BLOCKS}`,
      );
  }
}

function message(raw: unknown, path: string): AnthropicMessage {
  const entry = record(raw, path);
  const role = entry.role;
  if (role !== "user" && role !== "assistant") {
    invalid(`${path}.role`, "Input should be 'user' or 'assistant'");
  }
  if (typeof entry.content === "string") return { role, content: entry.content };
  const blocks = list(entry.content, `${path}.content`);
  return { role, content: blocks.map((part, i) => block(part, `${path}.content.${i}`, role)) };
}

function systemText(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "string") return raw;
  return list(raw, "system")
    .map((part, i) => {
      const entry = record(part, `system.${i}`);
      if (entry.type !== "text") invalid(`system.${i}.type`, "Input should be 'text'");
      return string(entry.text, `system.${i}.text`);
    })
    .join("\n");
}

function tools(raw: unknown): AnthropicTool[] {
  if (raw === undefined) return [];
  return list(raw, "tools").flatMap((entry, i) => {
    const tool = record(entry, `tools.${i}`);
    const name = string(tool.name, `tools.${i}.name`);
    // Server tools (`web_search_20250305`, `bash_20250124`, ...) carry a versioned type.
    if (tool.type !== undefined && tool.type !== "custom") return [];
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(name)) {
      invalid(`tools.${i}.name`, "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'");
    }
    if (tool.description !== undefined) string(tool.description, `tools.${i}.description`);
    const schema = record(tool.input_schema, `tools.${i}.input_schema`);
    if (schema.type !== "object")
      invalid(`tools.${i}.input_schema.type`, "Input should be 'object'");
    return [{ name, inputSchema: schema }];
  });
}

function toolChoice(raw: unknown): AnthropicRequest["toolChoice"] {
  if (raw === undefined) return undefined;
  const choice = record(raw, "tool_choice");
  switch (choice.type) {
    case "auto":
    case "any":
    case "none":
      return { type: choice.type };
    case "tool":
      return { type: "tool", name: string(choice.name, "tool_choice.name") };
    default:
      return invalid("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'");
  }
}

function thinking(raw: unknown, maxTokens: number | undefined): boolean {
  if (raw === undefined) return false;
  const config = record(raw, "thinking");
  if (config.type === "disabled") return false;
  if (config.type === "adaptive") return true;
  if (config.type !== "enabled") {
    invalid("thinking.type", "Input should be 'enabled', 'disabled' or 'adaptive'");
  }
  const budget = integer(config.budget_tokens, "thinking.budget_tokens", 1024);
  if (maxTokens !== undefined && budget >= maxTokens) {
    invalid("max_tokens", "must be greater than thinking.budget_tokens");
  }
  return true;
}

function parse(body: unknown, kind: "messages" | "count_tokens"): AnthropicRequest {
  const root = record(body, "body");
  const model = string(root.model, "model");
  if (model === "") invalid("model", "String should have at least 1 character");
  const maxTokens = kind === "messages" ? integer(root.max_tokens, "max_tokens", 1) : undefined;
  const messages = list(root.messages, "messages").map((entry, i) =>
    message(entry, `messages.${i}`),
  );
  if (messages.length === 0) invalid("messages", "at least one message is required");
  const last = messages.at(-1);
  if (last?.role === "assistant" && typeof last.content === "string" && /\s$/.test(last.content)) {
    invalid("messages", "final assistant content cannot end with trailing whitespace");
  }
  const stopSequences =
    root.stop_sequences === undefined ? [] : list(root.stop_sequences, "stop_sequences");
  for (const [i, sequence] of stopSequences.entries()) string(sequence, `stop_sequences.${i}`);
  unitNumber(root.temperature, "temperature");
  unitNumber(root.top_p, "top_p");
  if (root.top_k !== undefined) integer(root.top_k, "top_k", 0);
  if (root.metadata !== undefined) {
    const metadata = record(root.metadata, "metadata");
    if (metadata.user_id !== undefined && metadata.user_id !== null) {
      string(metadata.user_id, "metadata.user_id");
    }
  }
  if (root.stream !== undefined && typeof root.stream !== "boolean") {
    invalid("stream", "Input should be a valid boolean");
  }
  const definesTools = root.tools !== undefined && list(root.tools, "tools").length > 0;
  const broken = conversationRefusal(messages, definesTools);
  if (broken) throw new InvalidRequest(broken);
  const request = {
    model,
    maxTokens,
    system: systemText(root.system),
    messages,
    tools: tools(root.tools),
    toolChoice: toolChoice(root.tool_choice),
    stopSequences: stopSequences as string[],
    thinking: thinking(root.thinking, maxTokens),
    stream: root.stream === true,
  };
  const refused = kind === "messages" ? anthropicRefusal(model, root, request) : undefined;
  if (refused) throw new InvalidRequest(refused);
  return request;
}

/** Validates a `/v1/messages` body (`kind: "messages"`) or a `/v1/messages/count_tokens` body. */
export function parseAnthropicRequest(
  body: unknown,
  kind: "messages" | "count_tokens" = "messages",
): AnthropicRequestResult {
  try {
    return { ok: true, request: parse(body, kind) };
  } catch (error) {
    if (error instanceof InvalidRequest) return { ok: false, message: error.message };
    throw error;
  }
}
