/**
 * @module providers/anthropic/anthropic-stream
 * Turns Anthropic's named SSE events into normalized stream parts:
 * - `message_start` → `stream-start` (with the message id) and the input/cache usage;
 * - `text_delta` → `text-delta` (the JSON prefill goes out before the first text),
 *   `thinking_delta` → `reasoning-delta`;
 * - a `tool_use` block start → `tool-call-start`, its block index mapped to a 0-based tool-call
 *   index; non-empty `input_json_delta` fragments → `tool-call-delta` (a tool call whose input
 *   never got a fragment gets `{}`, so its arguments always parse);
 * - the output tool of a `json_schema` request (`anthropic-json-output.ts`) is the answer: its
 *   input fragments are `text-delta`s (a wrapped one is unwrapped whole at its block's end) and
 *   its `tool_use` stop is a normal stop;
 * - `message_delta` → stop reason and cumulative output usage; `message_stop` → `finish`.
 * `ping`, `signature_delta`, `citations_delta`, redacted thinking and unknown events are
 * ignored. An `error` event throws its `UpstreamError`; a stream that ends before
 * `message_stop`, or a frame that is not JSON, throws kind `protocol`.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import type { CallWarning, ChatStreamPart } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import type { SseEvent } from "../kit/sse-decoder.ts";
import { toolCallName } from "../kit/tool-call-name.ts";
import type { AnthropicStreamEvent, AnthropicUsage } from "./anthropic-api.ts";
import { anthropicStreamError } from "./anthropic-error.ts";
import { type OutputTool, outputFinishReason, outputToolText } from "./anthropic-json-output.ts";
import {
  convertAnthropicUsage,
  mergeAnthropicUsage,
  startUsage,
} from "./convert-anthropic-usage.ts";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.ts";

export interface AnthropicStreamInit {
  warnings: CallWarning[];
  upstreamRequestId: string | undefined;
  /** Text the assistant turn was prefilled with, emitted before the first text delta. */
  prefill: string | undefined;
  /** The tool whose input is a `json_schema` answer: its input streams out as text. */
  outputTool?: OutputTool;
}

interface ToolBlock {
  index: number;
  hasInput: boolean;
}

/** The output tool's block: its input is text; a wrapped one is kept whole to be unwrapped. */
interface AnswerBlock {
  input: string;
}

function parseEvent(event: SseEvent): AnthropicStreamEvent {
  try {
    const data: unknown = JSON.parse(event.data);
    if (typeof data !== "object" || data === null) throw new Error("not an object");
    return data as AnthropicStreamEvent;
  } catch (error) {
    throw new UpstreamError({
      kind: "protocol",
      message: `Upstream sent a malformed stream event (${event.event ?? "message"}).`,
      cause: error,
    });
  }
}

/** A streamed tool input, read whole; what does not parse stands as the empty object. */
function parseInput(input: string): unknown {
  if (input === "") return {};
  try {
    return JSON.parse(input);
  } catch {
    return {};
  }
}

export async function* parseAnthropicStream(
  /** The upstream's events, as each read completed them (`decodeSseBatches`). */
  batches: AsyncIterable<SseEvent[]>,
  init: AnthropicStreamInit,
): AsyncGenerator<ChatStreamPart> {
  let started = false;
  let stopped = false;
  let prefill = init.prefill;
  let stopReason: string | null | undefined;
  let usage: AnthropicUsage | undefined;
  const tools = new Map<number, ToolBlock>();
  const answers = new Map<number, AnswerBlock>();
  let answered = false;
  const outputTool = init.outputTool;

  // One asynchronous step per read: a read's events are taken in a plain loop.
  reading: for await (const events of batches)
    for (const event of events) {
      const data = parseEvent(event);
      const type = data.type ?? event.event;
      if (type === "error") throw anthropicStreamError(data, init.upstreamRequestId);
      if (type === "message_start") {
        started = true;
        usage = mergeAnthropicUsage(usage, startUsage(data.message?.usage));
        yield {
          type: "stream-start",
          warnings: init.warnings,
          upstreamRequestId: init.upstreamRequestId,
          ...(data.message?.id ? { id: data.message.id } : {}),
        };
        continue;
      }
      if (!started) continue;
      const blockIndex = data.index ?? -1;
      switch (type) {
        case "content_block_start": {
          const block = data.content_block;
          if (block?.type === "text") {
            if (prefill) yield { type: "text-delta", delta: prefill };
            prefill = undefined;
            if (block.text) yield { type: "text-delta", delta: block.text };
          } else if (block?.type === "tool_use" && outputTool && block.name === outputTool.name) {
            if (!answered) answers.set(blockIndex, { input: "" });
            answered = true;
          } else if (block?.type === "tool_use") {
            const tool = { index: tools.size, hasInput: false };
            tools.set(blockIndex, tool);
            yield {
              type: "tool-call-start",
              index: tool.index,
              id: block.id ?? "",
              name: toolCallName(block.name, init.upstreamRequestId),
            };
          }
          break;
        }
        case "content_block_delta": {
          const delta = data.delta;
          if (delta?.type === "text_delta" && delta.text) {
            yield { type: "text-delta", delta: delta.text };
          } else if (delta?.type === "thinking_delta" && delta.thinking) {
            yield { type: "reasoning-delta", delta: delta.thinking };
          } else if (delta?.type === "input_json_delta" && delta.partial_json) {
            const answer = answers.get(blockIndex);
            if (answer && outputTool?.wrapped) answer.input += delta.partial_json;
            else if (answer) {
              answer.input += delta.partial_json;
              yield { type: "text-delta", delta: delta.partial_json };
            }
            const tool = tools.get(blockIndex);
            if (tool) {
              tool.hasInput = true;
              yield {
                type: "tool-call-delta",
                index: tool.index,
                argumentsDelta: delta.partial_json,
              };
            }
          }
          break;
        }
        case "content_block_stop": {
          const answer = answers.get(blockIndex);
          if (answer && outputTool && (outputTool.wrapped || answer.input === "")) {
            yield {
              type: "text-delta",
              delta: outputToolText(parseInput(answer.input), outputTool),
            };
          }
          const tool = tools.get(blockIndex);
          if (tool && !tool.hasInput) {
            tool.hasInput = true;
            yield { type: "tool-call-delta", index: tool.index, argumentsDelta: "{}" };
          }
          break;
        }
        case "message_delta":
          if (data.delta?.stop_reason !== undefined) stopReason = data.delta.stop_reason;
          usage = mergeAnthropicUsage(usage, data.usage);
          break;
        case "message_stop":
          stopped = true;
          break;
      }
      if (stopped) break reading;
    }
  if (!stopped) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream stream ended before message_stop.",
      upstreamRequestId: init.upstreamRequestId,
    });
  }
  yield {
    type: "finish",
    finishReason: outputFinishReason(mapAnthropicStopReason(stopReason), answered, tools.size),
    usage: convertAnthropicUsage(usage),
  };
}
