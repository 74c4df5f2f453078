import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ChatStreamPart } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { decodeSseBatches } from "../kit/sse-decoder.ts";
import type { OutputTool } from "./anthropic-json-output.ts";
import { parseAnthropicStream } from "./anthropic-stream.ts";

/** A `.chunks.txt` fixture (one event's JSON per line) as the SSE bytes Anthropic sends. */
function fixtureSse(name: string): string {
  const lines = readFileSync(new URL(`./__fixtures__/${name}.chunks.txt`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  return lines
    .map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
    .join("");
}

async function* chunks(text: string): AsyncGenerator<string> {
  // Split mid-frame to exercise the decoder's buffering.
  for (let i = 0; i < text.length; i += 37) yield text.slice(i, i + 37);
}

async function parts(
  sse: string,
  prefill?: string,
  outputTool?: OutputTool,
): Promise<ChatStreamPart[]> {
  const out: ChatStreamPart[] = [];
  const stream = parseAnthropicStream(decodeSseBatches(chunks(sse)), {
    warnings: [{ type: "unsupported", setting: "seed" }],
    upstreamRequestId: "req_1",
    prefill,
    ...(outputTool ? { outputTool } : {}),
  });
  for await (const part of stream) out.push(part);
  return out;
}

async function failure(sse: string): Promise<UpstreamError> {
  const error: unknown = await parts(sse).catch((caught: unknown) => caught);
  if (!UpstreamError.isInstance(error)) throw new Error("expected an UpstreamError");
  return error;
}

describe("parseAnthropicStream", () => {
  it("maps text and two tool calls, with block indexes renumbered from 0", async () => {
    expect(await parts(fixtureSse("anthropic-tool-use"))).toEqual([
      {
        type: "stream-start",
        warnings: [{ type: "unsupported", setting: "seed" }],
        upstreamRequestId: "req_1",
        id: "msg_014p7gG3wDgGV9EUtLvnow3U",
      },
      { type: "text-delta", delta: "Okay, let's check" },
      { type: "text-delta", delta: " the weather." },
      {
        type: "tool-call-start",
        index: 0,
        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name: "get_weather",
      },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"location":' },
      { type: "tool-call-delta", index: 0, argumentsDelta: ' "San Francisco, CA"}' },
      { type: "tool-call-start", index: 1, id: "toolu_01Bx2cfJ34qAmk2tNTrN8Vq7", name: "get_time" },
      { type: "tool-call-delta", index: 1, argumentsDelta: "{}" },
      {
        type: "finish",
        finishReason: "tool_calls",
        usage: {
          input: { total: 472, cacheRead: 0, cacheWrite: 0 },
          output: { total: 89, reasoning: 0 },
          source: "upstream",
          raw: {
            input_tokens: 472,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 89,
          },
        },
      },
    ]);
  });

  it("maps thinking to reasoning and ignores signatures, redacted thinking, citations and unknown events", async () => {
    const result = await parts(fixtureSse("anthropic-thinking"));
    expect(result.slice(1)).toEqual([
      { type: "reasoning-delta", delta: "Let me solve this step by step." },
      { type: "text-delta", delta: "The answer is 42." },
      {
        type: "finish",
        finishReason: "stop",
        usage: expect.objectContaining({
          input: { total: 35, cacheRead: 20, cacheWrite: 5 },
          output: { total: 25, reasoning: 0 },
        }),
      },
    ]);
  });

  it("emits the prefill before the first text", async () => {
    const result = await parts(fixtureSse("anthropic-thinking"), "{");
    expect(result.filter((part) => part.type === "text-delta")).toEqual([
      { type: "text-delta", delta: "{" },
      { type: "text-delta", delta: "The answer is 42." },
    ]);
  });

  it("throws the error event's UpstreamError", async () => {
    const error = await failure(fixtureSse("anthropic-overloaded"));
    expect(error).toMatchObject({
      kind: "http",
      vendorCode: "overloaded_error",
      message: "Overloaded",
      upstreamRequestId: "req_1",
    });
  });

  it("throws a protocol error for a stream cut before message_stop or a non-JSON frame", async () => {
    const cut = fixtureSse("anthropic-tool-use").split("event: message_stop")[0] ?? "";
    expect(await failure(cut)).toMatchObject({
      kind: "protocol",
      message: "Upstream stream ended before message_stop.",
    });
    expect(await failure('event: message_start\ndata: {"type":"message_st\n\n')).toMatchObject({
      kind: "protocol",
    });
  });

  it("throws a protocol error for a tool_use block without a name, not a call named ''", async () => {
    const nameless = fixtureSse("anthropic-tool-use").replace('"name":"get_weather",', "");
    expect(await failure(nameless)).toMatchObject({
      kind: "protocol",
      message: "Upstream tool call has no name.",
    });
  });

  it("reports no usage when the upstream sent none", async () => {
    const sse = [
      '{"type":"message_start","message":{"id":"msg_1","content":[]}}',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}',
      '{"type":"message_stop"}',
    ]
      .map((line) => `data: ${line}\n\n`)
      .join("");
    expect((await parts(sse)).at(-1)).toEqual({
      type: "finish",
      finishReason: "stop",
      usage: undefined,
    });
  });

  it("streams the output tool's input as the answer text, and its tool_use stop as a stop", async () => {
    const sse = fixtureSse("anthropic-tool-use");
    const out = await parts(sse, undefined, { name: "get_weather", wrapped: false });
    const text = out.flatMap((part) => (part.type === "text-delta" ? [part.delta] : []));
    // The output tool's input follows the text before it; the other tool stays a tool call.
    expect(text.slice(2).join("")).toBe('{"location": "San Francisco, CA"}');
    expect(out.filter((part) => part.type === "tool-call-start")).toEqual([
      { type: "tool-call-start", index: 0, id: "toolu_01Bx2cfJ34qAmk2tNTrN8Vq7", name: "get_time" },
    ]);
    expect(out.at(-1)).toMatchObject({ type: "finish", finishReason: "tool_calls" });

    const alone = await parts(sse, undefined, { name: "get_time", wrapped: false });
    expect(alone.filter((part) => part.type === "tool-call-start")).toHaveLength(1);
    expect(alone.filter((part) => part.type === "text-delta").at(-1)).toEqual({
      type: "text-delta",
      delta: "{}",
    });
  });

  it("unwraps a wrapped output tool's value whole at the end of its block", async () => {
    const events = [
      { type: "message_start", message: { id: "msg_1", usage: { input_tokens: 5 } } },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_1", name: "list", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"value": ["a",' },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: ' "b"]}' },
      },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } },
      { type: "message_stop" },
    ];
    const sse = events
      .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
      .join("");
    const out = await parts(sse, undefined, { name: "list", wrapped: true });
    expect(out.filter((part) => part.type === "text-delta")).toEqual([
      { type: "text-delta", delta: '["a","b"]' },
    ]);
    expect(out.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
  });
});
