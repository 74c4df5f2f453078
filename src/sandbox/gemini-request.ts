/**
 * @module sandbox/gemini-request
 * Validates a Gemini `generateContent` body (pure) and normalizes it into the planner's
 * `ChatRequest`, so the same conversation gets the same reply as over the OpenAI protocol:
 * `systemInstruction` becomes a system message, `model` turns assistant messages,
 * `functionResponse` parts tool messages, and `inlineData`/`fileData` images count as images.
 * The planner's seed hashes `rawMessages`, which are rebuilt in OpenAI's shape for that reason.
 * A well-formed request is then held to the model's own rules (`gemini-model-rules.ts`).
 * @see https://ai.google.dev/api/generate-content#request-body
 */
import type { ChatMessage, ChatRequest, JsonRecord } from "./chat-request.ts";
import { isRecord } from "./chat-request.ts";
import { geminiRefusal, signsFunctionCalls } from "./gemini-model-rules.ts";
import {
  type Checked,
  camelKeys,
  invalidValue,
  readGenerationConfig,
  readToolConfig,
  readTools,
  unknownKey,
  violation,
} from "./gemini-request-config.ts";

export interface GeminiChatRequest {
  /** The planner's view of the request. */
  chat: ChatRequest;
  includeThoughts: boolean;
  thinkingBudget: number | undefined;
}

type Part =
  | { kind: "text"; text: string; thought: boolean }
  | { kind: "media"; mimeType: string | undefined; url: string }
  | { kind: "call"; name: string; args: JsonRecord }
  | { kind: "response"; name: string; text: string };

const PROTO = "type.googleapis.com/google.ai.generativelanguage.v1beta";
const TOP_KEYS = new Set(
  "model contents systemInstruction tools toolConfig generationConfig safetySettings cachedContent labels".split(
    " ",
  ),
);
const DATA_KEYS = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];
const PART_KEYS = new Set([...DATA_KEYS, "thought", "thoughtSignature", "videoMetadata"]);
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

/** The text a function response stands for: its `content` string, else the whole JSON. */
function responseText(response: unknown): string {
  if (isRecord(response) && typeof response.content === "string") return response.content;
  return response === undefined ? "" : JSON.stringify(response);
}

function readPart(raw: unknown, at: string): Checked<Part | undefined> {
  if (!isRecord(raw)) return fail(invalidValue(at, `${PROTO}.Part`, raw));
  const unknown = unknownKey(raw, PART_KEYS, at);
  if (unknown) return fail(unknown);
  const part = camelKeys(raw);
  const data = DATA_KEYS.filter((key) => part[key] !== undefined);
  if (data.length !== 1) {
    const message =
      data.length === 0
        ? "required oneof field 'data' must have one initialized field"
        : "oneof field 'data' is already set. Cannot set 'data' more than once";
    return fail(violation(`${at}.data`, message));
  }
  const { text, inlineData, fileData, functionCall, functionResponse } = part;
  if (text !== undefined) {
    if (typeof text !== "string") return fail(invalidValue(`${at}.text`, "TYPE_STRING", text));
    return { ok: true, value: { kind: "text", text, thought: part.thought === true } };
  }
  if (inlineData !== undefined) {
    const blob = isRecord(inlineData) ? camelKeys(inlineData) : {};
    if (typeof blob.mimeType !== "string" || blob.mimeType === "")
      return fail(violation(`${at}.inline_data.mime_type`, "mime_type must be set"));
    if (typeof blob.data !== "string" || !BASE64.test(blob.data)) {
      const value = `Base64 decoding failed for ${JSON.stringify(blob.data)}`;
      return fail(`Invalid value at '${at}.inline_data.data' (TYPE_BYTES), ${value}`);
    }
    const url = `data:${blob.mimeType};base64,${blob.data}`;
    return { ok: true, value: { kind: "media", mimeType: blob.mimeType, url } };
  }
  if (fileData !== undefined) {
    const file = isRecord(fileData) ? camelKeys(fileData) : {};
    if (typeof file.fileUri !== "string" || file.fileUri === "")
      return fail(violation(`${at}.file_data.file_uri`, "file_uri must be set"));
    const mimeType = typeof file.mimeType === "string" ? file.mimeType : undefined;
    return { ok: true, value: { kind: "media", mimeType, url: file.fileUri } };
  }
  if (functionCall !== undefined) {
    const call = isRecord(functionCall) ? camelKeys(functionCall) : {};
    if (typeof call.name !== "string" || call.name === "")
      return fail(violation(`${at}.function_call.name`, "Name cannot be empty."));
    if (call.args !== undefined && !isRecord(call.args))
      return fail(invalidValue(`${at}.function_call.args`, "google.protobuf.Struct", call.args));
    const args = isRecord(call.args) ? call.args : {};
    return { ok: true, value: { kind: "call", name: call.name, args } };
  }
  if (functionResponse !== undefined) {
    const response = isRecord(functionResponse) ? camelKeys(functionResponse) : {};
    if (typeof response.name !== "string" || response.name === "")
      return fail(violation(`${at}.function_response.name`, "Name cannot be empty."));
    if (response.response !== undefined && !isRecord(response.response)) {
      const type = "google.protobuf.Struct";
      return fail(invalidValue(`${at}.function_response.response`, type, response.response));
    }
    const text = responseText(response.response);
    return { ok: true, value: { kind: "response", name: response.name, text } };
  }
  return { ok: true, value: undefined }; // executableCode / codeExecutionResult: not modelled
}

function readParts(raw: unknown, at: string): Checked<Part[]> {
  if (!Array.isArray(raw) || raw.length === 0)
    return fail(violation(`${at}.parts`, "contents.parts must not be empty."));
  const parts: Part[] = [];
  for (const [j, item] of raw.entries()) {
    const read = readPart(item, `${at}.parts[${j}]`);
    if (!read.ok) return read;
    if (read.value) parts.push(read.value);
  }
  return { ok: true, value: parts };
}

const isImage = (part: Part) =>
  part.kind === "media" && (part.mimeType === undefined || part.mimeType.startsWith("image/"));

/** One Gemini turn as planner messages plus the OpenAI-shaped messages the seed hashes. */
function toMessages(role: string, parts: Part[]): Array<[ChatMessage, JsonRecord]> {
  const texts = parts.flatMap((p) => (p.kind === "text" && !p.thought ? [p.text] : []));
  const text = texts.join("\n");
  if (role === "system")
    return [
      [
        { role, text, imageCount: 0 },
        { role, content: text },
      ],
    ];
  if (role === "model") {
    const calls = parts.flatMap((p) =>
      p.kind === "call"
        ? [{ type: "function", function: { name: p.name, arguments: JSON.stringify(p.args) } }]
        : [],
    );
    const raw = { role: "assistant", content: texts.length ? text : null };
    return [
      [
        { role: "assistant", text, imageCount: 0 },
        calls.length ? { ...raw, tool_calls: calls } : raw,
      ],
    ];
  }
  const messages: Array<[ChatMessage, JsonRecord]> = [];
  const visible = parts.filter((p) => (p.kind === "text" && !p.thought) || p.kind === "media");
  if (visible.length > 0) {
    const only = visible[0];
    const content =
      visible.length === 1 && only?.kind === "text"
        ? only.text
        : visible.map((p) =>
            p.kind === "text"
              ? { type: "text", text: p.text }
              : { type: "image_url", image_url: { url: p.kind === "media" ? p.url : "" } },
          );
    const imageCount = parts.filter(isImage).length;
    messages.push([
      { role: "user", text, imageCount },
      { role: "user", content },
    ]);
  }
  for (const part of parts) {
    if (part.kind !== "response") continue;
    messages.push([
      { role: "tool", text: part.text, imageCount: 0 },
      { role: "tool", name: part.name, content: part.text },
    ]);
  }
  return messages;
}

/** Validates `contents` (and `systemInstruction`) into message pairs, in order. */
function readConversation(
  contents: unknown,
  systemInstruction: unknown,
): Checked<Array<[ChatMessage, JsonRecord]>> {
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0))
    return fail(violation("contents", "contents is not specified"));
  if (!Array.isArray(contents)) return fail(invalidValue("contents", `${PROTO}.Content`, contents));
  const messages: Array<[ChatMessage, JsonRecord]> = [];
  if (systemInstruction !== undefined) {
    const system = isRecord(systemInstruction) ? camelKeys(systemInstruction) : undefined;
    if (!system) {
      const type = `${PROTO}.Content`;
      return fail(invalidValue("system_instruction", type, systemInstruction));
    }
    const parts = readParts(system.parts, "system_instruction");
    if (!parts.ok) return parts;
    messages.push(...toMessages("system", parts.value));
  }
  for (const [i, content] of contents.entries()) {
    const at = `contents[${i}]`;
    if (!isRecord(content)) return fail(invalidValue(at, `${PROTO}.Content`, content));
    const unknown = unknownKey(content, new Set(["role", "parts"]), at);
    if (unknown) return fail(unknown);
    const role = content.role ?? "user";
    if (role !== "user" && role !== "model") return fail("Please use a valid role: user, model.");
    const parts = readParts(content.parts, at);
    if (!parts.ok) return parts;
    messages.push(...toMessages(role, parts.value));
  }
  return { ok: true, value: messages };
}

/**
 * Gemini 3 refuses a request whose current turn (the model turns since the last user text)
 * replays a step's function calls without the signature the first of them came with.
 */
function unsignedFunctionCall(contents: unknown): string | undefined {
  if (!Array.isArray(contents)) return undefined;
  const partsOf = (content: unknown): Record<string, unknown>[] =>
    isRecord(content) && Array.isArray(content.parts)
      ? content.parts.filter(isRecord).map((part) => camelKeys(part))
      : [];
  let turnStart = 0;
  for (const [index, content] of contents.entries()) {
    if (isRecord(content) && content.role !== "model" && partsOf(content).some((p) => p.text))
      turnStart = index + 1;
  }
  for (const [index, content] of contents.entries()) {
    if (index < turnStart || !isRecord(content) || content.role !== "model") continue;
    const parts = partsOf(content);
    const position = parts.findIndex((part) => part.functionCall !== undefined);
    const first = parts[position];
    if (!first || (typeof first.thoughtSignature === "string" && first.thoughtSignature)) continue;
    const call = isRecord(first.functionCall) ? first.functionCall.name : undefined;
    return (
      "Function call is missing a thought_signature in functionCall parts. This is required " +
      "for tools to work correctly, and missing thought_signature may lead to degraded model " +
      `performance. Additional data, function call \`default_api:${String(call)}\`, position ${position + 1}. ` +
      "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
    );
  }
  return undefined;
}

/** Validates a `generateContent` / `streamGenerateContent` body for `model`. */
export function parseGeminiRequest(
  body: unknown,
  model: string,
  stream: boolean,
): Checked<GeminiChatRequest> {
  if (!isRecord(body))
    return fail(`Invalid JSON payload received. Unknown name "": Root element must be a message.`);
  const unknown = unknownKey(body, TOP_KEYS);
  if (unknown) return fail(unknown);
  const request = camelKeys(body);
  const conversation = readConversation(request.contents, request.systemInstruction);
  if (!conversation.ok) return conversation;
  if (signsFunctionCalls(model)) {
    const unsigned = unsignedFunctionCall(request.contents);
    if (unsigned) return fail(unsigned);
  }
  const config = readGenerationConfig(request.generationConfig);
  if (!config.ok) return config;
  const refused = geminiRefusal(model, config.value);
  if (refused) return fail(refused);
  const tools = readTools(request.tools);
  if (!tools.ok) return tools;
  const toolChoice = readToolConfig(request.toolConfig);
  if (!toolChoice.ok) return toolChoice;
  const settings = config.value;
  return {
    ok: true,
    value: {
      chat: {
        model,
        messages: conversation.value.map(([message]) => message),
        rawMessages: conversation.value.map(([, raw]) => raw),
        stream,
        includeUsage: stream,
        maxTokens: settings.maxOutputTokens,
        tools: tools.value,
        toolChoice: toolChoice.value,
        jsonObject: settings.jsonObject,
        ...(settings.jsonSchema !== undefined ? { jsonSchema: settings.jsonSchema } : {}),
      },
      includeThoughts: settings.includeThoughts && settings.thinkingBudget !== 0,
      thinkingBudget: settings.thinkingBudget,
    },
  };
}

/**
 * Validates a `countTokens` body: `{contents}` or `{generateContentRequest: {...}}`, and
 * returns the planner's messages (whose prompt-token count is the answer).
 */
export function parseCountTokensRequest(body: unknown, model: string): Checked<ChatMessage[]> {
  if (!isRecord(body))
    return fail(`Invalid JSON payload received. Unknown name "": Root element must be a message.`);
  const request = camelKeys(body);
  if (request.generateContentRequest !== undefined) {
    const inner = parseGeminiRequest(request.generateContentRequest, model, false);
    return inner.ok ? { ok: true, value: inner.value.chat.messages } : inner;
  }
  const unknown = unknownKey(body, new Set(["contents"]));
  if (unknown) return fail(unknown);
  const conversation = readConversation(request.contents, undefined);
  if (!conversation.ok) return conversation;
  return { ok: true, value: conversation.value.map(([message]) => message) };
}
