/**
 * @module sandbox/anthropic-shapes
 * Renders an Anthropic plan into the wire shapes (pure): the non-stream `message` body and the
 * ordered list of stream events, plus the named-event SSE frame.
 *
 * Stream order: `message_start` (input and cache counts, `output_tokens: 1`), then per block
 * `content_block_start` → deltas → `content_block_stop` with one `ping` right after the first
 * block start, then `message_delta` (stop reason, cumulative `output_tokens`) and
 * `message_stop`. Text and thinking go out 3 tokens per delta; tool input as `input_json_delta`
 * fragments of 2 tokens after an empty first fragment; a thinking block ends with its
 * `signature_delta`.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import type { AnthropicPlan, PlannedBlock } from "./anthropic-reply.ts";
import type { JsonRecord } from "./chat-request.ts";
import { groupTokens, tokenize } from "./deterministic-text.ts";

export const TEXT_TOKENS_PER_DELTA = 3;
export const JSON_TOKENS_PER_DELTA = 2;

export interface MessageMeta {
  /** `msg_…` */
  id: string;
  model: string;
}

export interface StreamEvent {
  event: string;
  data: JsonRecord;
}

function renderBlock(block: PlannedBlock): JsonRecord {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
  }
}

/** The non-stream body; `usage` is left out when `withUsage` is false (the `no-usage` fault). */
export function messageBody(
  meta: MessageMeta,
  plan: AnthropicPlan,
  withUsage: boolean,
): JsonRecord {
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: plan.blocks.map(renderBlock),
    stop_reason: plan.stopReason,
    stop_sequence: plan.stopSequence,
    ...(withUsage ? { usage: { ...plan.usage } } : {}),
  };
}

function emptyBlock(block: PlannedBlock): JsonRecord {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: "" };
    case "text":
      return { type: "text", text: "" };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: {} };
  }
}

function blockDeltas(block: PlannedBlock): JsonRecord[] {
  switch (block.type) {
    case "thinking":
      return [
        ...groupTokens(tokenize(block.thinking), TEXT_TOKENS_PER_DELTA).map((thinking) => ({
          type: "thinking_delta",
          thinking,
        })),
        { type: "signature_delta", signature: block.signature },
      ];
    case "text":
      return groupTokens(tokenize(block.text), TEXT_TOKENS_PER_DELTA).map((text) => ({
        type: "text_delta",
        text,
      }));
    case "tool_use":
      return ["", ...groupTokens(tokenize(block.json), JSON_TOKENS_PER_DELTA)].map(
        (partial_json) => ({ type: "input_json_delta", partial_json }),
      );
  }
}

/** Every event of the stream, in order. `withUsage: false` leaves both usage objects out. */
export function streamEvents(
  meta: MessageMeta,
  plan: AnthropicPlan,
  withUsage: boolean,
): StreamEvent[] {
  const events: StreamEvent[] = [];
  const push = (data: JsonRecord) => events.push({ event: String(data.type), data });
  push({
    type: "message_start",
    message: {
      id: meta.id,
      type: "message",
      role: "assistant",
      model: meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(withUsage ? { usage: { ...plan.usage, output_tokens: 1 } } : {}),
    },
  });
  plan.blocks.forEach((block, index) => {
    push({ type: "content_block_start", index, content_block: emptyBlock(block) });
    if (index === 0) push({ type: "ping" });
    for (const delta of blockDeltas(block)) push({ type: "content_block_delta", index, delta });
    push({ type: "content_block_stop", index });
  });
  push({
    type: "message_delta",
    delta: { stop_reason: plan.stopReason, stop_sequence: plan.stopSequence },
    ...(withUsage ? { usage: { output_tokens: plan.usage.output_tokens } } : {}),
  });
  push({ type: "message_stop" });
  return events;
}

/** One named server-sent event. */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
