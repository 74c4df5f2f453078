/**
 * @module endpoints/chat-completions/count-chat-prompt
 * The gateway's own count of a chat call's prompt, used when the upstream reports no usage or a
 * stream ends before its usage arrives: everything the call sends that a vendor bills as input —
 * the messages' text, the tool calls and reasoning of earlier assistant turns, the tool
 * definitions and the response format — counted exactly, each image part at the hold's image
 * allowance, plus a few tokens of framing per message. It counts what the hold counted
 * (`estimate-chat-cost.ts`), so an aborted stream is not billed less input than a tool- or
 * image-heavy prompt cost the operator.
 */
import { countTokens } from "../../billing/index.ts";
import type { ChatCallOptions, ChatContentPart } from "../../spec/index.ts";
import { IMAGE_TOKENS, PER_MESSAGE_OVERHEAD } from "./estimate-chat-cost.ts";

/** Tokens of the reply's framing (the assistant turn the vendor starts). */
const REPLY_PRIMING = 3;

/** The prompt's text and its image parts. */
export function chatPromptParts(options: ChatCallOptions): { text: string; images: number } {
  const parts: string[] = [];
  let images = 0;
  const addContent = (content: string | ChatContentPart[] | null) => {
    if (content === null) return;
    if (typeof content === "string") {
      parts.push(content);
      return;
    }
    for (const part of content) {
      if (part.type === "text") parts.push(part.text);
      else images += 1;
    }
  };
  for (const message of options.messages) {
    addContent(message.content);
    if (message.role === "assistant") {
      if (message.reasoning) parts.push(message.reasoning);
      for (const call of message.toolCalls ?? []) parts.push(call.name, call.arguments);
    }
  }
  if (options.tools?.length) parts.push(JSON.stringify(options.tools));
  if (options.responseFormat) parts.push(JSON.stringify(options.responseFormat));
  return { text: parts.join("\n"), images };
}

/** The prompt's input tokens as the gateway counts them. */
export async function countChatPrompt(options: ChatCallOptions): Promise<number> {
  const { text, images } = chatPromptParts(options);
  return (
    (await countTokens(text, { exact: true })) +
    images * IMAGE_TOKENS +
    options.messages.length * PER_MESSAGE_OVERHEAD +
    REPLY_PRIMING
  );
}
