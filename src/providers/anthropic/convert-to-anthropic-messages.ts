/**
 * @module providers/anthropic/convert-to-anthropic-messages
 * Converts the normalized prompt into Anthropic's `system` + `messages`:
 * - system and developer messages → the top-level `system` text (joined by blank lines);
 * - user image parts: data URLs → base64 sources, http(s) URLs → url sources;
 * - assistant tool calls → `tool_use` blocks with the arguments parsed into `input`;
 * - tool messages → `tool_result` blocks in a user turn;
 * - consecutive turns of the same role are merged (Anthropic wants alternating turns), so
 *   consecutive tool results share one user turn;
 * - a final assistant turn loses trailing whitespace (Anthropic rejects it).
 * Dropped with a warning: assistant `reasoning` (replaying it needs the thinking signature,
 * which the normalized prompt does not carry), message `name`, image `detail`, images outside
 * user and tool turns, and image URLs that are neither base64 data URLs nor http(s).
 * @see https://docs.anthropic.com/en/api/messages#body-messages
 */
import type { CallWarning, ChatContentPart, ChatMessage } from "../../spec/index.ts";
import type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicMessageParam,
  AnthropicTextBlock,
} from "./anthropic-api.ts";

export interface AnthropicPrompt {
  system: string | undefined;
  messages: AnthropicMessageParam[];
  warnings: CallWarning[];
}

class Warnings {
  readonly #bySetting = new Map<string, CallWarning>();
  add(warning: CallWarning & { setting: string }): void {
    if (!this.#bySetting.has(warning.setting)) this.#bySetting.set(warning.setting, warning);
  }
  list(): CallWarning[] {
    return [...this.#bySetting.values()];
  }
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

export function convertImageUrl(url: string): AnthropicImageBlock | undefined {
  const data = DATA_URL.exec(url);
  if (data)
    return { type: "image", source: { type: "base64", media_type: data[1]!, data: data[2]! } };
  if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
  return undefined;
}

function convertParts(
  content: string | ChatContentPart[],
  warnings: Warnings,
  imagesAllowed: boolean,
): Array<AnthropicTextBlock | AnthropicImageBlock> {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content.flatMap((part): Array<AnthropicTextBlock | AnthropicImageBlock> => {
    if (part.type === "text") return part.text === "" ? [] : [{ type: "text", text: part.text }];
    if (!imagesAllowed) {
      warnings.add({
        type: "unsupported",
        setting: "image",
        details: "images are only sent in user and tool messages",
      });
      return [];
    }
    if (part.detail) warnings.add({ type: "unsupported", setting: "image detail" });
    const image = convertImageUrl(part.url);
    if (!image) {
      warnings.add({
        type: "unsupported",
        setting: "image url",
        details: "only base64 data URLs and http(s) URLs are supported",
      });
      return [];
    }
    return [image];
  });
}

function asBlocks(content: AnthropicMessageParam["content"]): AnthropicContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** Appends a turn, merging it into the previous one when the role repeats. */
function append(
  messages: AnthropicMessageParam[],
  role: AnthropicMessageParam["role"],
  content: AnthropicMessageParam["content"],
): void {
  if (content.length === 0 && typeof content !== "string") return;
  const last = messages.at(-1);
  if (last?.role === role) last.content = [...asBlocks(last.content), ...asBlocks(content)];
  else messages.push({ role, content });
}

function parseInput(text: string, warnings: Warnings): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Reported below.
  }
  warnings.add({
    type: "compatibility",
    setting: "tool call arguments",
    details: "arguments that are not a JSON object were sent as {}",
  });
  return {};
}

function finalTrim(messages: AnthropicMessageParam[]): void {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return;
  if (typeof last.content === "string") {
    last.content = last.content.trimEnd();
    return;
  }
  const block = last.content.at(-1);
  if (block?.type === "text") block.text = block.text.trimEnd();
}

export function convertToAnthropicMessages(prompt: readonly ChatMessage[]): AnthropicPrompt {
  const warnings = new Warnings();
  const system: string[] = [];
  const messages: AnthropicMessageParam[] = [];
  for (const message of prompt) {
    if ("name" in message && message.name)
      warnings.add({ type: "unsupported", setting: "message name" });
    switch (message.role) {
      case "system":
      case "developer": {
        if (messages.length > 0) {
          warnings.add({
            type: "compatibility",
            setting: "system message position",
            details:
              "system messages after the first turn were moved into the top-level system prompt",
          });
        }
        const text = convertParts(message.content, warnings, false)
          .map((part) => (part.type === "text" ? part.text : ""))
          .join("\n");
        if (text !== "") system.push(text);
        break;
      }
      case "user":
        append(
          messages,
          "user",
          typeof message.content === "string"
            ? message.content
            : convertParts(message.content, warnings, true),
        );
        break;
      case "assistant": {
        if (message.reasoning) {
          warnings.add({
            type: "unsupported",
            setting: "reasoning",
            details: "assistant reasoning cannot be replayed without its thinking signature",
          });
        }
        const calls: AnthropicContentBlock[] = (message.toolCalls ?? []).map((call) => ({
          type: "tool_use",
          id: call.id,
          name: call.name,
          input: parseInput(call.arguments, warnings),
        }));
        const content = message.content ?? "";
        const plain = typeof content === "string" && content !== "" && calls.length === 0;
        append(
          messages,
          "assistant",
          plain ? content : [...convertParts(content, warnings, false), ...calls],
        );
        break;
      }
      case "tool": {
        const parts = convertParts(message.content, warnings, true);
        const content = typeof message.content === "string" ? message.content : parts;
        append(messages, "user", [
          { type: "tool_result", tool_use_id: message.toolCallId, content },
        ]);
        break;
      }
    }
  }
  finalTrim(messages);
  return {
    system: system.length ? system.join("\n\n") : undefined,
    messages,
    warnings: warnings.list(),
  };
}
