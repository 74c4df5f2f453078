/**
 * @module sandbox/anthropic-normalize
 * Turns a validated Anthropic request into the OpenAI-shaped `ChatRequest` the shared planner
 * reads (pure), so the same conversation gets the same reply on every protocol:
 * - `system` becomes a leading system message;
 * - a user turn's `tool_result` blocks become `tool` messages placed after the turn's own text,
 *   so a turn that returns tool results is answered from them;
 * - images (top level or inside tool results) are counted like OpenAI `image_url` parts;
 * - a trailing assistant turn is a prefill: it is taken out of the conversation, and a `{`
 *   prefill asks for the JSON reply (the continuation of a JSON object).
 * `rawMessages` (the planner's seed) is the conversation in OpenAI's message shape.
 */
import type { AnthropicBlock, AnthropicMessage, AnthropicRequest } from "./anthropic-request.ts";
import type { ChatMessage, ChatRequest, JsonRecord } from "./chat-request.ts";

export interface NormalizedAnthropic {
  chat: ChatRequest;
  /** Text of the trailing assistant turn the reply continues, if any. */
  prefill: string | undefined;
}

interface Parts {
  texts: string[];
  imageCount: number;
  /** OpenAI-shaped content parts, for the seed. */
  raw: JsonRecord[];
}

function imageUrl(block: Extract<AnthropicBlock, { type: "image" }>): string {
  const { source } = block;
  if (source.type === "base64") return `data:${source.media_type};base64,${source.data}`;
  return source.type === "url" ? source.url : `file:${source.file_id}`;
}

function collect(blocks: readonly AnthropicBlock[]): Parts {
  const parts: Parts = { texts: [], imageCount: 0, raw: [] };
  for (const block of blocks) {
    if (block.type === "text") {
      parts.texts.push(block.text);
      parts.raw.push({ type: "text", text: block.text });
    } else if (block.type === "image") {
      parts.imageCount++;
      parts.raw.push({ type: "image_url", image_url: { url: imageUrl(block) } });
    }
  }
  return parts;
}

function rawContent(content: string | Parts): string | JsonRecord[] {
  if (typeof content === "string") return content;
  // A single text part is sent as a plain string by OpenAI clients; mirror that.
  const [only] = content.raw;
  return content.raw.length === 1 && only?.type === "text" ? String(only.text) : content.raw;
}

interface Converted {
  messages: ChatMessage[];
  raw: JsonRecord[];
}

function convertUser(message: AnthropicMessage, out: Converted): void {
  if (typeof message.content === "string") {
    out.messages.push({ role: "user", text: message.content, imageCount: 0 });
    out.raw.push({ role: "user", content: message.content });
    return;
  }
  const own = collect(message.content);
  const results = message.content.filter((block) => block.type === "tool_result");
  if (results.length === 0 || own.texts.length > 0 || own.imageCount > 0) {
    out.messages.push({ role: "user", text: own.texts.join("\n"), imageCount: own.imageCount });
    out.raw.push({ role: "user", content: rawContent(own) });
  }
  for (const result of results) {
    const parts = typeof result.content === "string" ? result.content : collect(result.content);
    const text = typeof parts === "string" ? parts : parts.texts.join("\n");
    const imageCount = typeof parts === "string" ? 0 : parts.imageCount;
    out.messages.push({ role: "tool", text, imageCount });
    out.raw.push({ role: "tool", tool_call_id: result.tool_use_id, content: rawContent(parts) });
  }
}

function convertAssistant(message: AnthropicMessage, out: Converted): void {
  const blocks = typeof message.content === "string" ? [] : message.content;
  const text =
    typeof message.content === "string" ? message.content : collect(blocks).texts.join("\n");
  const calls = blocks.flatMap((block) =>
    block.type === "tool_use"
      ? [
          {
            id: block.id,
            type: "function",
            function: { name: block.name, arguments: JSON.stringify(block.input) },
          },
        ]
      : [],
  );
  out.messages.push({ role: "assistant", text, imageCount: 0 });
  out.raw.push({
    role: "assistant",
    content: text === "" ? null : text,
    ...(calls.length ? { tool_calls: calls } : {}),
  });
}

/** The text of a message (used for the prefill). */
function messageText(message: AnthropicMessage): string {
  if (typeof message.content === "string") return message.content;
  return collect(message.content).texts.join("");
}

export function normalizeAnthropicRequest(request: AnthropicRequest): NormalizedAnthropic {
  const out: Converted = { messages: [], raw: [] };
  if (request.system !== undefined && request.system !== "") {
    out.messages.push({ role: "system", text: request.system, imageCount: 0 });
    out.raw.push({ role: "system", content: request.system });
  }
  const last = request.messages.at(-1);
  const prefill = last?.role === "assistant" ? messageText(last) : undefined;
  const conversation = prefill === undefined ? request.messages : request.messages.slice(0, -1);
  for (const message of conversation) {
    if (message.role === "user") convertUser(message, out);
    else convertAssistant(message, out);
  }
  const choice = request.toolChoice;
  return {
    prefill,
    chat: {
      model: request.model,
      messages: out.messages,
      rawMessages: out.raw,
      stream: request.stream,
      includeUsage: request.stream,
      maxTokens: request.maxTokens,
      tools: request.tools.map((tool) => ({ name: tool.name, parameters: tool.inputSchema })),
      toolChoice:
        choice?.type === "none"
          ? "none"
          : choice?.type === "tool"
            ? { name: choice.name }
            : undefined,
      jsonObject: prefill?.trim() === "{",
    },
  };
}
