/**
 * @module providers/gemini/convert-to-gemini-contents
 * Converts normalized chat messages to Gemini `contents` plus a `systemInstruction`:
 * - system and developer messages → `systemInstruction.parts` (in order, wherever they appear);
 * - user → `user`, assistant → `model`; consecutive turns of one role are merged;
 * - image data URLs → `inlineData`; any other URL → `fileData`, its MIME type guessed from the
 *   path's extension (see {@link guessMimeType}; `image/jpeg` when unknown);
 * - assistant tool calls → `functionCall` parts with the arguments parsed to an object;
 * - tool messages → `functionResponse` parts on a `user` turn. Gemini matches results to calls
 *   by function name, found from the earlier assistant tool call with the same id; the result
 *   is sent as is when it is a JSON object, else wrapped as `{content: <text>}`.
 * Dropped: message `name`s, assistant `reasoning` (Gemini needs its own signed thoughts), image
 * `detail` and images in system messages (the last two with a warning).
 * Gemini 3 models refuse a replayed `functionCall` without the thought signature they gave it
 * (400 "Function call is missing a thought_signature"). Clients of the gateway speak OpenAI or
 * Anthropic and cannot carry it, so with `signFunctionCalls` the first `functionCall` part of
 * each model turn (where Gemini puts it, parallel calls included) carries Google's documented
 * stand-in, `skip_thought_signature_validator`.
 * @see https://ai.google.dev/api/caching#Content
 * @see https://ai.google.dev/gemini-api/docs/function-calling
 */
import type { CallWarning, ChatContentPart, ChatMessage } from "../../spec/index.ts";
import type { GeminiContent, GeminiPart } from "./gemini-api-types.ts";

export interface GeminiPrompt {
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
  warnings: CallWarning[];
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  bmp: "image/bmp",
  pdf: "application/pdf",
};

/** The MIME type of a URL from its path's extension (query and fragment ignored). */
export function guessMimeType(url: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split(/[?#]/)[0] ?? url;
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || "image/jpeg";
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** An image URL as a Gemini part: `data:` URLs inline (base64), anything else by reference. */
export function convertImageUrl(url: string): GeminiPart {
  const data = /^data:([^;,]+)?((?:;[^;,]*)*?)(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const mimeType = data[1] ?? "application/octet-stream";
    const payload = data[4] ?? "";
    const base64 = data[3]
      ? payload
      : Buffer.from(percentDecode(payload), "utf8").toString("base64");
    return { inlineData: { mimeType, data: base64 } };
  }
  return { fileData: { mimeType: guessMimeType(url), fileUri: url } };
}

function textOf(content: string | ChatContentPart[] | null): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Google's documented stand-in for a thought signature the caller does not have. */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** Whether a Gemini model checks the thought signatures of replayed function calls. */
export function checksThoughtSignatures(upstreamModel: string): boolean {
  return /^gemini-([3-9]|\d{2,})/.test(upstreamModel.replace(/^models\//, ""));
}

export function convertToGeminiContents(
  messages: readonly ChatMessage[],
  options: { signFunctionCalls?: boolean } = {},
): GeminiPrompt {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  const warnings: CallWarning[] = [];
  const warn = (warning: CallWarning) => {
    if (!warnings.some((seen) => JSON.stringify(seen) === JSON.stringify(warning)))
      warnings.push(warning);
  };
  const toolNames = new Map<string, string>();
  const append = (role: GeminiContent["role"], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "developer": {
        if (Array.isArray(message.content) && message.content.some((p) => p.type === "image"))
          warn({ type: "unsupported", setting: "messages", details: "images in system messages" });
        const text = textOf(message.content);
        if (text) system.push({ text });
        break;
      }
      case "user": {
        const content = message.content;
        if (typeof content === "string") {
          append("user", content ? [{ text: content }] : []);
          break;
        }
        const parts = content.flatMap((part): GeminiPart[] => {
          if (part.type === "text") return part.text ? [{ text: part.text }] : [];
          if (part.detail)
            warn({ type: "unsupported", setting: "image detail", details: "Gemini ignores it" });
          return [convertImageUrl(part.url)];
        });
        append("user", parts);
        break;
      }
      case "assistant": {
        const text = textOf(message.content);
        const parts: GeminiPart[] = text ? [{ text }] : [];
        for (const call of message.toolCalls ?? []) {
          toolNames.set(call.id, call.name);
          const args = call.arguments.trim() === "" ? {} : parseObject(call.arguments);
          if (!args)
            warn({
              type: "compatibility",
              setting: "tool_calls",
              details: `arguments of ${call.name} are not a JSON object; sent as {}`,
            });
          const signed = options.signFunctionCalls && !parts.some((part) => "functionCall" in part);
          parts.push({
            functionCall: { name: call.name, args: args ?? {} },
            ...(signed ? { thoughtSignature: SKIP_THOUGHT_SIGNATURE } : {}),
          });
        }
        append("model", parts);
        break;
      }
      case "tool": {
        const name = toolNames.get(message.toolCallId);
        if (!name)
          warn({
            type: "compatibility",
            setting: "messages",
            details: `no assistant tool call has id ${message.toolCallId}; its id is sent as the function name`,
          });
        const text = textOf(message.content);
        const response = parseObject(text) ?? { content: text };
        append("user", [{ functionResponse: { name: name ?? message.toolCallId, response } }]);
        break;
      }
    }
  }
  return {
    ...(system.length ? { systemInstruction: { parts: system } } : {}),
    contents,
    warnings,
  };
}
