/**
 * @module endpoints/messages/convert-messages-request
 * Turns a validated Anthropic Messages body into normalized `ChatCallOptions` for upstreams that
 * speak another protocol, with a warning for every setting that is changed or dropped:
 * - `system` (string or text blocks) → one leading system message, blocks joined by blank lines;
 *   a `role: "system"` entry inside `messages` (Claude Code sends them) stays at its position;
 * - user turns: text and images (base64 → data URL) become parts; `tool_result` blocks become
 *   `tool` messages placed before the rest of the turn (they answer the previous assistant
 *   turn); plain-text documents become text; anything else is dropped with a warning;
 * - assistant turns: text → content, `tool_use` → tool calls, `thinking` → reasoning,
 *   `redacted_thinking` is dropped silently (only Anthropic can read it);
 * - `top_k` and the `thinking` config (as `reasoning_effort`) go to `extraBody`, as does
 *   `disable_parallel_tool_use` (as `parallel_tool_calls: false`);
 * - server tools (tools with a versioned `type`) and top-level fields the gateway does not model
 *   are not forwarded: one unsupported warning each.
 * `cache_control` markers are ignored everywhere. The schema accepts any block with a `type`, so
 * known blocks are read defensively: a malformed one is dropped with a warning.
 * @see https://docs.anthropic.com/en/api/messages
 */
import type {
  CallWarning,
  ChatCallOptions,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ChatToolChoice,
} from "../../spec/index.ts";
import type { ContentBlock, MessagesRequest } from "./schema.ts";

/** Top-level fields this converter (or the endpoint) handles; any other one is warned about. */
const MODELED_FIELDS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "tools",
  "tool_choice",
  "thinking",
  "metadata",
]);

type Block = { type: string } & Record<string, unknown>;

/** Collects warnings, each distinct one once (long conversations repeat the same drops). */
class Warnings {
  readonly #seen = new Map<string, CallWarning>();
  add(warning: CallWarning): void {
    const key = JSON.stringify(warning);
    if (!this.#seen.has(key)) this.#seen.set(key, warning);
  }
  list(): CallWarning[] {
    return [...this.#seen.values()];
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function blocks(content: ContentBlock[]): Block[] {
  return content as Block[];
}

function dropBlock(warnings: Warnings, type: string, details = "content block dropped"): void {
  warnings.add({ type: "unsupported", setting: type, details });
}

function textOf(block: Block, warnings: Warnings): string | undefined {
  if (typeof block.text === "string") return block.text;
  dropBlock(warnings, "text", "text block without text dropped");
  return undefined;
}

/** Text of a content list made of text blocks (system turns); other blocks are warned about. */
function joinedText(content: string | ContentBlock[], separator: string, warnings: Warnings) {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const block of blocks(content)) {
    if (block.type !== "text") dropBlock(warnings, block.type);
    else {
      const text = textOf(block, warnings);
      if (text) texts.push(text);
    }
  }
  return texts.join(separator);
}

function imagePart(block: Block, warnings: Warnings): ChatContentPart | undefined {
  const source = record(block.source);
  if (
    source?.type === "base64" &&
    typeof source.media_type === "string" &&
    typeof source.data === "string"
  ) {
    return { type: "image", url: `data:${source.media_type};base64,${source.data}` };
  }
  if (source?.type === "url" && typeof source.url === "string") {
    return { type: "image", url: source.url };
  }
  dropBlock(warnings, "image", `image source type ${String(source?.type)} dropped`);
  return undefined;
}

function documentPart(block: Block, warnings: Warnings): ChatContentPart | undefined {
  const source = record(block.source);
  if (source?.type === "text" && typeof source.data === "string") {
    return { type: "text", text: source.data };
  }
  dropBlock(
    warnings,
    "document",
    `only plain-text documents are supported; a ${String(source?.type)} document was dropped`,
  );
  return undefined;
}

function toolResultMessage(block: Block, warnings: Warnings): ChatMessage {
  let text = "";
  if (typeof block.content === "string") text = block.content;
  else if (Array.isArray(block.content)) {
    const texts: string[] = [];
    for (const item of block.content as Block[]) {
      if (item.type === "text") {
        const value = textOf(item, warnings);
        if (value !== undefined) texts.push(value);
      } else if (item.type === "image") {
        dropBlock(warnings, "tool_result image", "images inside tool results are dropped");
      } else dropBlock(warnings, `tool_result ${item.type}`);
    }
    text = texts.join("\n");
  }
  return {
    role: "tool",
    toolCallId: String(block.tool_use_id ?? ""),
    content: block.is_error === true ? `Error: ${text}` : text,
  };
}

function userMessages(content: string | ContentBlock[], warnings: Warnings): ChatMessage[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const toolMessages: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  for (const block of blocks(content)) {
    let part: ChatContentPart | undefined;
    if (block.type === "text") {
      const text = textOf(block, warnings);
      if (text !== undefined) part = { type: "text", text };
    } else if (block.type === "image") part = imagePart(block, warnings);
    else if (block.type === "document") part = documentPart(block, warnings);
    else if (block.type === "tool_result") toolMessages.push(toolResultMessage(block, warnings));
    else dropBlock(warnings, block.type);
    if (part) parts.push(part);
  }
  return parts.length ? [...toolMessages, { role: "user", content: parts }] : toolMessages;
}

function assistantMessages(content: string | ContentBlock[], warnings: Warnings): ChatMessage[] {
  if (typeof content === "string") return [{ role: "assistant", content }];
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of blocks(content)) {
    if (block.type === "text") {
      const text = textOf(block, warnings);
      if (text) texts.push(text);
    } else if (block.type === "thinking") {
      if (typeof block.thinking === "string" && block.thinking) reasoning.push(block.thinking);
    } else if (block.type === "tool_use") {
      toolCalls.push({
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        arguments: JSON.stringify(block.input ?? {}),
      });
    } else if (block.type !== "redacted_thinking") dropBlock(warnings, block.type);
  }
  if (!texts.length && !toolCalls.length && !reasoning.length) return [];
  return [
    {
      role: "assistant",
      content: texts.length ? texts.join("\n\n") : toolCalls.length ? null : "",
      ...(toolCalls.length ? { toolCalls } : {}),
      ...(reasoning.length ? { reasoning: reasoning.join("\n\n") } : {}),
    },
  ];
}

function convertMessages(body: MessagesRequest, warnings: Warnings): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) {
    const system = joinedText(body.system, "\n\n", warnings);
    if (system) messages.push({ role: "system", content: system });
  }
  for (const message of body.messages) {
    if (message.role === "system") {
      const system = joinedText(message.content, "\n\n", warnings);
      if (system) messages.push({ role: "system", content: system });
    } else if (message.role === "user") messages.push(...userMessages(message.content, warnings));
    else messages.push(...assistantMessages(message.content, warnings));
  }
  return messages;
}

function convertTools(tools: MessagesRequest["tools"], warnings: Warnings): ChatTool[] {
  const out: ChatTool[] = [];
  for (const tool of tools ?? []) {
    if (tool.type !== undefined && tool.type !== "custom") {
      warnings.add({
        type: "unsupported",
        setting: tool.type,
        details: `server tool "${tool.name}" was dropped`,
      });
      continue;
    }
    out.push({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.input_schema ? { parameters: tool.input_schema } : {}),
    });
  }
  return out;
}

function convertToolChoice(
  choice: NonNullable<MessagesRequest["tool_choice"]>,
  warnings: Warnings,
): ChatToolChoice {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      if (choice.name) return { name: choice.name };
      warnings.add({
        type: "compatibility",
        setting: "tool_choice",
        details: 'type "tool" without a name was sent as "required"',
      });
      return "required";
  }
}

/** Maps a thinking budget to the OpenAI-style effort levels. */
function reasoningEffort(budget: number | undefined): "low" | "medium" | "high" {
  if (budget === undefined) return "medium";
  if (budget >= 16_000) return "high";
  return budget < 4_000 ? "low" : "medium";
}

export function convertMessagesRequest(
  body: MessagesRequest,
  upstreamModel: string,
): { options: ChatCallOptions; warnings: CallWarning[] } {
  const warnings = new Warnings();
  const options: ChatCallOptions = {
    upstreamModel,
    messages: convertMessages(body, warnings),
    maxOutputTokens: body.max_tokens,
  };
  if (body.temperature !== undefined) options.temperature = body.temperature;
  if (body.top_p !== undefined) options.topP = body.top_p;
  if (body.stop_sequences?.length) options.stop = body.stop_sequences;
  if (body.metadata?.user_id) options.user = body.metadata.user_id;

  const extraBody: Record<string, unknown> = {};
  if (body.top_k !== undefined) extraBody.top_k = body.top_k;

  const tools = convertTools(body.tools, warnings);
  if (tools.length) {
    options.tools = tools;
    if (body.tool_choice) options.toolChoice = convertToolChoice(body.tool_choice, warnings);
    if (body.tool_choice?.disable_parallel_tool_use === true) extraBody.parallel_tool_calls = false;
  } else if (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool") {
    warnings.add({ type: "unsupported", setting: "tool_choice", details: "no client tools" });
  }

  if (body.thinking && body.thinking.type !== "disabled") {
    const effort = reasoningEffort(body.thinking.budget_tokens);
    extraBody.reasoning_effort = effort;
    warnings.add({
      type: "compatibility",
      setting: "thinking",
      details: `sent as reasoning_effort "${effort}"`,
    });
  }
  if (Object.keys(extraBody).length) options.extraBody = extraBody;

  for (const key of Object.keys(body)) {
    if (!MODELED_FIELDS.has(key)) warnings.add({ type: "unsupported", setting: key });
  }
  return { options, warnings: warnings.list() };
}
