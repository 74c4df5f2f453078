import { describe, expect, it } from "vitest";
import type { ChatStreamPart } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import type { SseEvent } from "../kit/sse-decoder.ts";
import { toChatStreamParts } from "./gemini-stream-parts.ts";

async function* events(...data: unknown[]): AsyncGenerator<SseEvent> {
  for (const item of data)
    yield {
      event: undefined,
      id: undefined,
      data: typeof item === "string" ? item : JSON.stringify(item),
    };
}

/** The parts of `source`'s events, arriving one read each. */
async function collect(source: AsyncIterable<SseEvent>): Promise<ChatStreamPart[]> {
  async function* reads() {
    for await (const event of source) yield [event];
  }
  const parts: ChatStreamPart[] = [];
  for await (const part of toChatStreamParts(reads(), { warnings: [] })) parts.push(part);
  return parts;
}

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
  responseId: "r-1",
});

describe("toChatStreamParts", () => {
  it("emits start, reasoning and text deltas, and finish with the last usage", async () => {
    const parts = await collect(
      events(
        { ...chunk([{ text: "Hmm", thought: true }]), usageMetadata: { promptTokenCount: 4 } },
        chunk([{ text: "Hello" }]),
        {
          ...chunk([{ text: " world" }], { finishReason: "STOP" }),
          usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 1 },
        },
      ),
    );
    expect(parts.map((part) => part.type)).toEqual([
      "stream-start",
      "reasoning-delta",
      "text-delta",
      "text-delta",
      "finish",
    ]);
    expect(parts[0]).toEqual({
      type: "stream-start",
      warnings: [],
      id: "r-1",
      upstreamRequestId: "r-1",
    });
    expect(parts.at(-1)).toMatchObject({
      type: "finish",
      finishReason: "stop",
      usage: { input: { total: 4 }, output: { total: 3, reasoning: 1 } },
    });
  });

  it("emits each function call whole with generated ids", async () => {
    const parts = await collect(
      events(
        chunk(
          [
            { functionCall: { name: "get_weather", args: { city: "Rome" } } },
            { functionCall: { name: "get_time", args: {} } },
          ],
          { finishReason: "STOP" },
        ),
      ),
    );
    expect(parts.slice(1)).toEqual([
      { type: "tool-call-start", index: 0, id: "call_0", name: "get_weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":"Rome"}' },
      { type: "tool-call-start", index: 1, id: "call_1", name: "get_time" },
      { type: "tool-call-delta", index: 1, argumentsDelta: "{}" },
      { type: "finish", finishReason: "tool_calls", usage: undefined },
    ]);
  });

  it("fails with protocol errors for a cut or malformed stream", async () => {
    const cut = collect(events(chunk([{ text: "Hel" }])));
    await expect(cut).rejects.toMatchObject({
      kind: "protocol",
      message: /ended before it finished/,
    });
    await expect(collect(events())).rejects.toMatchObject({ kind: "protocol" });
    const malformed = collect(events(chunk([{ text: "a" }]), '{"candidates": ['));
    await expect(malformed).rejects.toSatisfy(
      (error: unknown) => UpstreamError.isInstance(error) && error.kind === "protocol",
    );
  });

  it("fails with the vendor's error for an error chunk", async () => {
    const failing = collect(
      events({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }),
    );
    await expect(failing).rejects.toMatchObject({
      kind: "http",
      status: 503,
      vendorCode: "UNAVAILABLE",
      retryable: true,
    });
  });

  it("finishes a blocked prompt as a content filter", async () => {
    const parts = await collect(events({ promptFeedback: { blockReason: "SAFETY" } }));
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: "content_filter" });
  });
});
