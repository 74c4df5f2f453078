/**
 * @module sandbox/chat-reply
 * Decides what the sandbox answers to a chat request (pure): a deterministic text reply or a
 * tool call, its finish reason, and the prompt/completion token counts. Non-stream and stream
 * responses are both rendered from this plan, so they always agree.
 */

import { type ChatMessage, type ChatRequest, type ChatTool, isRecord } from "./chat-request.ts";
import { countTokens, hexId, pickWords, splitWords, stableHash } from "./deterministic-text.ts";
import { driftFromSchema, schemaInstance } from "./schema-instance.ts";

export const DEFAULT_REPLY_WORDS = 24;
/** Prompt tokens charged per image part (OpenAI's low-detail image cost). */
export const IMAGE_PROMPT_TOKENS = 85;

export interface ToolCallReply {
  id: string;
  name: string;
  /** JSON object text, `{"key": "value", ...}` (spaces after `:` and `,`). */
  arguments: string;
}

export type ChatReply =
  | { kind: "text"; content: string; finishReason: "stop" | "length" }
  | { kind: "tool_call"; call: ToolCallReply; finishReason: "tool_calls" };

export interface ChatPlan {
  reply: ChatReply;
  promptTokens: number;
  completionTokens: number;
  /** Hidden reasoning sent before the answer (`reasoning` fault); its tokens are in `completionTokens`. */
  reasoning?: string;
  /** Prompt tokens reported as cache reads and cache writes (parts of `promptTokens`). */
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/** The seed every deterministic choice for this request derives from. */
export function requestSeed(request: ChatRequest): number {
  // The messages alone: the same conversation gets the same reply from every vendor emulation.
  return stableHash(JSON.stringify(request.rawMessages));
}

/** One token per word of each message (at least 1 per message) plus a flat cost per image. */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += Math.max(1, countTokens(message.text)) + message.imageCount * IMAGE_PROMPT_TOKENS;
  }
  return total;
}

/**
 * The last turn of the conversation: the last message that is not a system or developer note
 * (clients such as Claude Code append a system note after the user's message).
 */
function lastTurn(messages: readonly ChatMessage[]): ChatMessage | undefined {
  return messages.findLast((message) => message.role !== "system" && message.role !== "developer");
}

function leadWords(messages: readonly ChatMessage[]): string[] {
  const last = lastTurn(messages);
  const lead: string[] = [];
  if (last?.role === "tool") {
    const result = splitWords(last.text).slice(0, 8);
    lead.push(
      "Sandbox",
      "reply",
      "using",
      "tool",
      "result:",
      ...(result.length ? result : ["(empty)"]),
    );
  } else {
    const lastUser = messages.findLast((message) => message.role === "user");
    const echo = splitWords(lastUser?.text ?? "").slice(0, 6);
    const quoted = echo.length ? echo : ["your", "message"];
    quoted[quoted.length - 1] += ":";
    lead.push("Sandbox", "reply", "to", ...quoted);
  }
  const images = messages.reduce((sum, message) => sum + message.imageCount, 0);
  if (images > 0) lead.push("I", "saw", String(images), images === 1 ? "image." : "images.");
  return lead;
}

/** The reply text: lead words, then seeded filler words, exactly `wordCount` words in all. */
export function replyText(
  messages: readonly ChatMessage[],
  seed: number,
  wordCount: number,
): string {
  const lead = leadWords(messages);
  const filler = pickWords(seed, Math.max(0, wordCount - lead.length));
  return [...lead, ...filler].slice(0, wordCount).join(" ");
}

/** JSON with a space after each `:` and `,`, as models write tool arguments. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(", ")}]`;
  if (isRecord(value)) {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spacedJson(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Deterministic arguments for the tool: an instance of its parameters' schema (its required
 * properties, with the right types, enums and formats), as a vendor's model gives them.
 */
export function toolCallArguments(tool: ChatTool, seed: number, offSchema = false): string {
  const value = schemaInstance(tool.parameters ?? {}, seed ^ stableHash(tool.name), {
    optional: false,
  });
  const args = isRecord(value) ? value : {};
  return spacedJson(offSchema ? driftFromSchema(args, tool.parameters) : args);
}

function chooseTool(request: ChatRequest): ChatTool | undefined {
  const last = lastTurn(request.messages);
  if (request.tools.length === 0 || last?.role !== "user" || request.toolChoice === "none") {
    return undefined;
  }
  const forced = request.toolChoice;
  return request.tools.find((tool) => tool.name === forced?.name) ?? request.tools[0];
}

/**
 * Plans the full answer. `words` overrides the default reply length; `max_tokens` caps it.
 * `choice` (for `n` above 1) picks other filler words and another tool-call id for each choice
 * after the first, which is the same as the only one.
 */
export function planChatReply(
  request: ChatRequest,
  options: { words?: number | undefined; choice?: number; offSchema?: boolean | undefined } = {},
): ChatPlan {
  const choice = options.choice ?? 0;
  const seed =
    choice === 0 ? requestSeed(request) : requestSeed(request) ^ stableHash(`choice ${choice}`);
  const promptTokens = countPromptTokens(request.messages);
  const tool = chooseTool(request);
  if (tool) {
    const call = {
      id: `call_${hexId(seed, 24)}`,
      name: tool.name,
      arguments: toolCallArguments(tool, seed, options.offSchema),
    };
    const reply: ChatReply = { kind: "tool_call", call, finishReason: "tool_calls" };
    return { reply, promptTokens, completionTokens: countTokens(call.arguments) };
  }
  const wanted = options.words ?? DEFAULT_REPLY_WORDS;
  const capped = request.maxTokens !== undefined && wanted > request.maxTokens;
  const text = replyText(request.messages, seed, capped ? (request.maxTokens ?? 0) : wanted);
  const content =
    request.jsonSchema !== undefined
      ? JSON.stringify(
          options.offSchema
            ? driftFromSchema(schemaInstance(request.jsonSchema, seed), request.jsonSchema)
            : schemaInstance(request.jsonSchema, seed),
        )
      : request.jsonObject
        ? JSON.stringify({ answer: text })
        : text;
  const reply: ChatReply = { kind: "text", content, finishReason: capped ? "length" : "stop" };
  return { reply, promptTokens, completionTokens: countTokens(content) };
}
