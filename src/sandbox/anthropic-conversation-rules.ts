/**
 * @module sandbox/anthropic-conversation-rules
 * What Anthropic's Messages API refuses across messages, with its own wording: empty content
 * (except an optional final assistant message), empty text blocks, a `tool_result` that answers
 * no `tool_use` of the message just before, a `tool_use` left unanswered by the next message,
 * and tool blocks in a request that defines no tools. Pure; `parseAnthropicRequest` asks it
 * once every message has its shape.
 */
import type { AnthropicBlock, AnthropicMessage } from "./anthropic-request.ts";

const blocksOf = (message: AnthropicMessage): AnthropicBlock[] =>
  typeof message.content === "string" ? [] : message.content;

function toolUseIds(message: AnthropicMessage | undefined): string[] {
  if (message?.role !== "assistant") return [];
  return blocksOf(message).flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
}

/** The refusal of the first rule `messages` break, or undefined. */
export function conversationRefusal(
  messages: readonly AnthropicMessage[],
  definesTools: boolean,
): string | undefined {
  for (const [i, message] of messages.entries()) {
    const finalAssistant = i === messages.length - 1 && message.role === "assistant";
    const empty =
      typeof message.content === "string" ? message.content === "" : message.content.length === 0;
    if (empty && !finalAssistant)
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    for (const block of blocksOf(message)) {
      if (block.type === "text" && block.text === "")
        return "messages: text content blocks must be non-empty";
    }
  }
  let toolBlocks = false;
  for (const [i, message] of messages.entries()) {
    const blocks = blocksOf(message);
    if (blocks.some((block) => block.type === "tool_use" || block.type === "tool_result"))
      toolBlocks = true;
    const asked = toolUseIds(messages[i - 1]);
    const results = blocks.flatMap((block, j) =>
      block.type === "tool_result" ? [{ id: block.tool_use_id, at: j }] : [],
    );
    const unexpected = results.filter((result) => !asked.includes(result.id));
    if (message.role === "user" && unexpected.length > 0)
      return `messages.${i}.content.${unexpected[0]!.at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.map((result) => result.id).join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    const next = messages[i + 1];
    const ids = toolUseIds(message);
    if (next && ids.length > 0) {
      const answered = new Set(
        blocksOf(next).flatMap((block) =>
          block.type === "tool_result" ? [block.tool_use_id] : [],
        ),
      );
      const unanswered = ids.filter((id) => !answered.has(id));
      if (unanswered.length > 0)
        return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  if (toolBlocks && !definesTools)
    return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
  return undefined;
}
