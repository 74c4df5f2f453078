/**
 * @module endpoints/messages/messages-stream-events
 * Turns normalized stream parts into Anthropic's SSE event sequence:
 * `message_start` → (`content_block_start` → deltas → `content_block_stop`)* → `message_delta`
 * → `message_stop`, with one `ping` right after the first block start.
 * - Reasoning deltas fill a `thinking` block, closed with a `signature_delta` (see
 *   {@link signThinking}) when another kind of part arrives; text deltas fill a `text` block.
 * - Each tool call gets a `tool_use` block (`input: {}`), opened with the empty first
 *   `input_json_delta` clients expect; its argument fragments follow as `input_json_delta`s.
 *   Anthropic blocks cannot interleave, and some upstreams interleave the fragments of parallel
 *   calls: a call that starts while another call's block is open waits, its fragments
 *   gathered, and goes out as a whole block when that block closes (another kind of part, or
 *   the end), so no delta ever follows its block's `content_block_stop`.
 * - `message_delta` carries the usage the request is charged, which `finish` works out (the
 *   vendor's report, or the gateway's own count of what went out).
 * - A failing source, or one that ends without `finish`, ends with an `error` event and no
 *   `message_stop`, as Anthropic does mid-stream.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import type { StreamFrame } from "../../core/operation.ts";
import type { ChatFinishReason, ChatStreamPart, TokenUsage } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { signThinking, toAnthropicUsage, toolUseId } from "./build-messages-response.ts";
import { stopReasonFor } from "./map-to-anthropic-stop-reason.ts";

type OpenBlock =
  | { kind: "thinking"; index: number; text: string }
  | { kind: "text"; index: number }
  | { kind: "tool"; index: number };

function frame(event: string, data: Record<string, unknown> = {}): StreamFrame {
  return { event, data: { type: event, ...data } };
}

function delta(index: number, value: Record<string, unknown>): StreamFrame {
  return frame("content_block_delta", { index, delta: value });
}

/** The `error` event for a failed stream. */
export function messagesErrorFrame(error: unknown): StreamFrame {
  const overloaded =
    UpstreamError.isInstance(error) &&
    (error.status === 529 || error.vendorCode === "overloaded_error");
  const message =
    error instanceof Error && error.message ? error.message : "Upstream stream failed.";
  return frame("error", {
    error: { type: overloaded ? "overloaded_error" : "api_error", message },
  });
}

/** Block bookkeeping: indexes, the open block and the ping. */
class BlockWriter {
  #nextIndex = 0;
  #open: OpenBlock | undefined;
  #pinged = false;
  /** Block index of each tool call, by the call's stream index. */
  readonly #toolBlocks = new Map<number, number>();
  /** Calls that started while another call's block was open, with their fragments so far. */
  readonly #waiting = new Map<number, { block: Record<string, unknown>; json: string }>();

  get hasToolCalls(): boolean {
    return this.#toolBlocks.size + this.#waiting.size > 0;
  }

  /** Closes the open block, then sends every waiting call as a whole block. */
  close(): StreamFrame[] {
    const open = this.#open;
    if (!open) return [];
    this.#open = undefined;
    const frames: StreamFrame[] = [];
    if (open.kind === "thinking") {
      frames.push(
        delta(open.index, { type: "signature_delta", signature: signThinking(open.text) }),
      );
    }
    frames.push(frame("content_block_stop", { index: open.index }));
    for (const [callIndex, waiting] of this.#waiting) {
      const index = this.#nextIndex++;
      this.#toolBlocks.set(callIndex, index);
      frames.push(
        frame("content_block_start", { index, content_block: waiting.block }),
        delta(index, { type: "input_json_delta", partial_json: "" }),
      );
      if (waiting.json)
        frames.push(delta(index, { type: "input_json_delta", partial_json: waiting.json }));
      frames.push(frame("content_block_stop", { index }));
    }
    this.#waiting.clear();
    return frames;
  }

  /** Closes what is open and opens the block `make` builds with the next index. */
  #start(make: (index: number) => [OpenBlock, Record<string, unknown>]): StreamFrame[] {
    const frames = this.close();
    const [block, contentBlock] = make(this.#nextIndex++);
    this.#open = block;
    frames.push(frame("content_block_start", { index: block.index, content_block: contentBlock }));
    if (!this.#pinged) {
      this.#pinged = true;
      frames.push(frame("ping"));
    }
    return frames;
  }

  reasoning(text: string): StreamFrame[] {
    if (!text) return [];
    const frames =
      this.#open?.kind === "thinking"
        ? []
        : this.#start((index) => [
            { kind: "thinking", index, text: "" },
            { type: "thinking", thinking: "" },
          ]);
    const open = this.#open as Extract<OpenBlock, { kind: "thinking" }>;
    open.text += text;
    frames.push(delta(open.index, { type: "thinking_delta", thinking: text }));
    return frames;
  }

  text(text: string): StreamFrame[] {
    if (!text) return [];
    const frames =
      this.#open?.kind === "text"
        ? []
        : this.#start((index) => [
            { kind: "text", index },
            { type: "text", text: "" },
          ]);
    frames.push(delta(this.#open!.index, { type: "text_delta", text }));
    return frames;
  }

  toolStart(part: Extract<ChatStreamPart, { type: "tool-call-start" }>, messageId: string) {
    if (this.#toolBlocks.has(part.index) || this.#waiting.has(part.index)) return [];
    const block = {
      type: "tool_use",
      id: toolUseId(part.id, messageId, part.index),
      name: part.name,
      input: {},
    };
    if (this.#open?.kind === "tool") {
      // Another call's block is open and may get more fragments: this one waits (see close).
      this.#waiting.set(part.index, { block, json: "" });
      return [];
    }
    const frames = this.#start((index) => {
      this.#toolBlocks.set(part.index, index);
      return [{ kind: "tool", index }, block];
    });
    frames.push(delta(this.#open!.index, { type: "input_json_delta", partial_json: "" }));
    return frames;
  }

  toolDelta(part: Extract<ChatStreamPart, { type: "tool-call-delta" }>): StreamFrame[] {
    if (!part.argumentsDelta) return [];
    const waiting = this.#waiting.get(part.index);
    if (waiting) {
      waiting.json += part.argumentsDelta;
      return [];
    }
    const index = this.#toolBlocks.get(part.index);
    if (index === undefined) return [];
    return [delta(index, { type: "input_json_delta", partial_json: part.argumentsDelta })];
  }
}

export async function* toMessagesEvents(
  parts: AsyncIterable<ChatStreamPart>,
  meta: { id: string; model: string; inputTokens: number },
  /** The stream finished (the vendor's usage, if any): resolves to the usage it is charged. */
  finish: (usage: TokenUsage | undefined, finishReason: ChatFinishReason) => Promise<TokenUsage>,
): AsyncGenerator<StreamFrame> {
  yield frame("message_start", {
    message: {
      id: meta.id,
      type: "message",
      role: "assistant",
      model: meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: meta.inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  const writer = new BlockWriter();
  try {
    for await (const part of parts) {
      switch (part.type) {
        case "stream-start":
          break;
        case "reasoning-delta":
          yield* writer.reasoning(part.delta);
          break;
        case "text-delta":
          yield* writer.text(part.delta);
          break;
        case "tool-call-start":
          yield* writer.toolStart(part, meta.id);
          break;
        case "tool-call-delta":
          yield* writer.toolDelta(part);
          break;
        case "finish": {
          yield* writer.close();
          const usage = toAnthropicUsage(await finish(part.usage, part.finishReason));
          yield frame("message_delta", {
            delta: {
              stop_reason: stopReasonFor(part.finishReason, writer.hasToolCalls),
              stop_sequence: null,
            },
            usage: {
              output_tokens: usage.output_tokens,
              input_tokens: usage.input_tokens,
              cache_read_input_tokens: usage.cache_read_input_tokens,
              cache_creation_input_tokens: usage.cache_creation_input_tokens,
            },
          });
          yield frame("message_stop");
          return;
        }
      }
    }
  } catch (error) {
    yield messagesErrorFrame(error);
    return;
  }
  yield messagesErrorFrame(new Error("Upstream stream ended before the response was complete."));
}
