import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { StreamFrame } from "../../core/operation.ts";
import type { ChatStreamPart, TokenUsage } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { signThinking } from "./build-messages-response.ts";
import { toMessagesEvents } from "./messages-stream-events.ts";

const meta = { id: "msg_1", model: "claude-sonnet-4-5", inputTokens: 120 };

const usage: TokenUsage = {
  input: { total: 500, cacheRead: 300, cacheWrite: 50 },
  output: { total: 33, reasoning: 5 },
  source: "upstream",
};

async function* source(parts: ChatStreamPart[], error?: unknown): AsyncGenerator<ChatStreamPart> {
  for (const part of parts) yield part;
  if (error !== undefined) throw error;
}

/** What `finish` resolves to without the vendor's usage: the gateway's own count. */
const OWN_COUNT: TokenUsage = {
  input: { total: 120, cacheRead: 0, cacheWrite: 0 },
  output: { total: 16, reasoning: 3 },
  source: "estimated",
};

async function collectMessagesEvents(parts: ChatStreamPart[], error?: unknown) {
  const onFinish = vi.fn(async (usage: TokenUsage | undefined) => usage ?? OWN_COUNT);
  const frames: StreamFrame[] = [];
  for await (const frame of toMessagesEvents(source(parts, error), meta, onFinish)) {
    frames.push(frame);
  }
  return { frames, onFinish };
}

type Data = { type: string; index?: number; delta?: { type: string } } & Record<string, unknown>;

/** `event data.type index delta.type`, one string per frame, for readable sequence checks. */
function outline(frames: StreamFrame[]): string[] {
  return frames.map((frame) => {
    const data = frame.data as Data;
    expect(data.type).toBe(frame.event);
    return [frame.event, data.index, data.delta?.type].filter((x) => x !== undefined).join(" ");
  });
}

function dataOf(frames: StreamFrame[], event: string): Data[] {
  return frames.filter((frame) => frame.event === event).map((frame) => frame.data as Data);
}

describe("toMessagesEvents", () => {
  it("streams a text-only answer", async () => {
    const { frames, onFinish } = await collectMessagesEvents([
      { type: "stream-start", warnings: [] },
      { type: "text-delta", delta: "" },
      { type: "text-delta", delta: "Hello" },
      { type: "text-delta", delta: " world" },
      { type: "finish", finishReason: "stop", usage },
    ]);
    expect(outline(frames)).toEqual([
      "message_start",
      "content_block_start 0",
      "ping",
      "content_block_delta 0 text_delta",
      "content_block_delta 0 text_delta",
      "content_block_stop 0",
      "message_delta",
      "message_stop",
    ]);
    expect(frames[0]).toEqual({
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 120,
            output_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
      },
    });
    expect(frames[1]?.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    expect(frames[3]?.data).toEqual({
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "Hello" },
    });
    expect(dataOf(frames, "message_delta")).toEqual([
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: {
          output_tokens: 33,
          input_tokens: 150,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 50,
        },
      },
    ]);
    expect(frames.at(-1)).toEqual({ event: "message_stop", data: { type: "message_stop" } });
    expect(onFinish).toHaveBeenCalledExactlyOnceWith(usage, "stop");
  });

  it("streams thinking, text and two tool calls with argument fragments", async () => {
    const { frames, onFinish } = await collectMessagesEvents([
      { type: "reasoning-delta", delta: "Let me " },
      { type: "reasoning-delta", delta: "think." },
      { type: "text-delta", delta: "Checking." },
      { type: "tool-call-start", index: 0, id: "call_a", name: "Read" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"path":' },
      { type: "tool-call-delta", index: 0, argumentsDelta: '"a.txt"}' },
      { type: "tool-call-start", index: 1, id: "toolu_b", name: "Bash" },
      { type: "tool-call-delta", index: 1, argumentsDelta: '{"command":"ls"}' },
      { type: "finish", finishReason: "tool_calls", usage: undefined },
    ]);
    expect(outline(frames)).toEqual([
      "message_start",
      "content_block_start 0",
      "ping",
      "content_block_delta 0 thinking_delta",
      "content_block_delta 0 thinking_delta",
      "content_block_delta 0 signature_delta",
      "content_block_stop 0",
      "content_block_start 1",
      "content_block_delta 1 text_delta",
      "content_block_stop 1",
      "content_block_start 2",
      "content_block_delta 2 input_json_delta",
      "content_block_delta 2 input_json_delta",
      "content_block_delta 2 input_json_delta",
      "content_block_stop 2",
      "content_block_start 3",
      "content_block_delta 3 input_json_delta",
      "content_block_delta 3 input_json_delta",
      "content_block_stop 3",
      "message_delta",
      "message_stop",
    ]);
    const starts = dataOf(frames, "content_block_start").map((data) => data.content_block);
    expect(starts).toEqual([
      { type: "thinking", thinking: "" },
      { type: "text", text: "" },
      { type: "tool_use", id: "call_a", name: "Read", input: {} },
      { type: "tool_use", id: "toolu_b", name: "Bash", input: {} },
    ]);
    const deltas = dataOf(frames, "content_block_delta").map((data) => data.delta);
    expect(deltas).toEqual([
      { type: "thinking_delta", thinking: "Let me " },
      { type: "thinking_delta", thinking: "think." },
      { type: "signature_delta", signature: signThinking("Let me think.") },
      { type: "text_delta", text: "Checking." },
      { type: "input_json_delta", partial_json: "" },
      { type: "input_json_delta", partial_json: '{"path":' },
      { type: "input_json_delta", partial_json: '"a.txt"}' },
      { type: "input_json_delta", partial_json: "" },
      { type: "input_json_delta", partial_json: '{"command":"ls"}' },
    ]);
    // No upstream usage: the usage the request is charged (here the gateway's own count).
    expect(dataOf(frames, "message_delta")[0]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: {
        output_tokens: 16,
        input_tokens: 120,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
    expect(onFinish).toHaveBeenCalledExactlyOnceWith(undefined, "tool_calls");
  });

  it("ends with an error event, without closing the block or message_stop, when the source throws", async () => {
    const { frames, onFinish } = await collectMessagesEvents(
      [{ type: "text-delta", delta: "Partial" }],
      new UpstreamError({ kind: "http", message: "Overloaded", status: 529 }),
    );
    expect(outline(frames)).toEqual([
      "message_start",
      "content_block_start 0",
      "ping",
      "content_block_delta 0 text_delta",
      "error",
    ]);
    expect(frames.at(-1)).toEqual({
      event: "error",
      data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    expect(onFinish).not.toHaveBeenCalled();
  });

  it.each([
    [
      new UpstreamError({ kind: "http", message: "Busy", vendorCode: "overloaded_error" }),
      "overloaded_error",
      "Busy",
    ],
    [new UpstreamError({ kind: "timeout", message: "Idle timeout" }), "api_error", "Idle timeout"],
    ["not an error", "api_error", "Upstream stream failed."],
  ])("reports %s as %s", async (error, type, message) => {
    const { frames } = await collectMessagesEvents([], error);
    expect(outline(frames)).toEqual(["message_start", "error"]);
    expect(frames.at(-1)?.data).toEqual({ type: "error", error: { type, message } });
  });

  it("treats a stream that ends without finish as an error", async () => {
    const { frames, onFinish } = await collectMessagesEvents([
      { type: "tool-call-start", index: 0, id: "call_a", name: "Read" },
      { type: "tool-call-delta", index: 0, argumentsDelta: "{" },
    ]);
    expect(outline(frames)).toEqual([
      "message_start",
      "content_block_start 0",
      "ping",
      "content_block_delta 0 input_json_delta",
      "content_block_delta 0 input_json_delta",
      "error",
    ]);
    expect(frames.at(-1)?.data).toEqual({
      type: "error",
      error: {
        type: "api_error",
        message: "Upstream stream ended before the response was complete.",
      },
    });
    expect(onFinish).not.toHaveBeenCalled();
  });

  it("closes an open thinking block with its signature on finish and pings only once", async () => {
    const { frames } = await collectMessagesEvents([
      { type: "text-delta", delta: "A" },
      { type: "reasoning-delta", delta: "B" },
      { type: "finish", finishReason: "length", usage },
    ]);
    expect(outline(frames)).toEqual([
      "message_start",
      "content_block_start 0",
      "ping",
      "content_block_delta 0 text_delta",
      "content_block_stop 0",
      "content_block_start 1",
      "content_block_delta 1 thinking_delta",
      "content_block_delta 1 signature_delta",
      "content_block_stop 1",
      "message_delta",
      "message_stop",
    ]);
    expect(dataOf(frames, "message_delta")[0]?.delta).toEqual({
      stop_reason: "max_tokens",
      stop_sequence: null,
    });
  });

  it("answers tool_use when tools were called but the upstream said stop, and stops reading after finish", async () => {
    const { frames } = await collectMessagesEvents([
      { type: "tool-call-start", index: 0, id: "", name: "Read" },
      { type: "finish", finishReason: "stop", usage },
      { type: "text-delta", delta: "ignored" },
    ]);
    expect(outline(frames).slice(-3)).toEqual([
      "content_block_stop 0",
      "message_delta",
      "message_stop",
    ]);
    expect(dataOf(frames, "content_block_start")[0]?.content_block).toEqual({
      type: "tool_use",
      id: expect.stringMatching(/^toolu_/),
      name: "Read",
      input: {},
    });
    expect(dataOf(frames, "message_delta")[0]?.delta).toEqual({
      stop_reason: "tool_use",
      stop_sequence: null,
    });
  });
});

describe("toMessagesEvents with parallel tool calls in any interleaving", () => {
  /** Each call's argument fragments, and an order in which the calls' parts arrive. */
  const interleavings = fc
    .array(fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 4 }), {
      minLength: 1,
      maxLength: 4,
    })
    .chain((calls) => {
      const slots = calls.flatMap((fragments, call) =>
        Array.from({ length: fragments.length + 1 }, () => call),
      );
      return fc.tuple(fc.constant(calls), fc.shuffledSubarray(slots, { minLength: slots.length }));
    });

  it("keeps every block whole: one open at a time, no delta outside its start and stop, the arguments intact", async () => {
    await fc.assert(
      fc.asyncProperty(interleavings, async ([calls, order]) => {
        const sent = calls.map(() => 0);
        const parts: ChatStreamPart[] = [{ type: "stream-start", warnings: [] }];
        for (const call of order) {
          const step = sent[call]!++;
          if (step === 0)
            parts.push({
              type: "tool-call-start",
              index: call,
              id: `call_${call}`,
              name: `f${call}`,
            });
          else
            parts.push({
              type: "tool-call-delta",
              index: call,
              argumentsDelta: calls[call]![step - 1]!,
            });
        }
        parts.push({ type: "finish", finishReason: "tool_calls", usage });
        const { frames } = await collectMessagesEvents(parts);
        let open: number | undefined;
        const closed = new Set<number>();
        const json = new Map<number, string>();
        const names = new Map<number, string>();
        for (const frame of frames) {
          const data = frame.data as Data & {
            content_block?: { name: string };
            delta?: { type: string; partial_json?: string };
          };
          if (frame.event === "content_block_start") {
            expect(open).toBeUndefined();
            expect(data.index).toBe(closed.size);
            open = data.index;
            names.set(data.index!, data.content_block!.name);
            json.set(data.index!, "");
          } else if (frame.event === "content_block_delta") {
            expect(data.index).toBe(open);
            json.set(data.index!, json.get(data.index!)! + (data.delta?.partial_json ?? ""));
          } else if (frame.event === "content_block_stop") {
            expect(data.index).toBe(open);
            closed.add(data.index!);
            open = undefined;
          }
        }
        expect(open).toBeUndefined();
        expect(closed.size).toBe(calls.length);
        for (const [index, name] of names)
          expect(json.get(index)).toBe(calls[Number(name.slice(1))]!.join(""));
      }),
      { numRuns: 300 },
    );
  });
});
