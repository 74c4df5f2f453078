import { describe, expect, it } from "vitest";
import type { StreamFrame } from "../../core/operation.ts";
import type { ChatStreamPart } from "../../spec/index.ts";
import { finishedResponse, responseSkeleton } from "./build-responses-response.ts";
import { ResponsesStreamWriter } from "./responses-stream-events.ts";

const usage = {
  input: { total: 10, cacheRead: 2, cacheWrite: 0 },
  output: { total: 5, reasoning: 1 },
  source: "upstream" as const,
};

function run(parts: ChatStreamPart[], finishReason: "stop" | "length" | "tool_calls" = "stop") {
  const skeleton = responseSkeleton(
    { model: "m", input: "Hi" },
    { id: "resp_1", createdAt: 1, model: "m" },
  );
  const writer = new ResponsesStreamWriter(skeleton);
  const frames: StreamFrame[] = [...writer.start()];
  for (const part of parts) frames.push(...writer.part(part));
  frames.push(...writer.close(finishReason));
  const response = finishedResponse(skeleton, {
    output: writer.output,
    finishReason,
    usage,
    now: 2_000,
  });
  frames.push(writer.terminal(response));
  return { frames, response };
}

const data = (frame: StreamFrame) => frame.data as Record<string, unknown>;
const types = (frames: StreamFrame[]) => frames.map((frame) => frame.event);

describe("the Responses event stream", () => {
  it("names every event, repeats it in type, and numbers them from 0 without gaps", () => {
    const { frames } = run([
      { type: "text-delta", delta: "Hel" },
      { type: "text-delta", delta: "lo" },
    ]);
    expect(types(frames)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    frames.forEach((frame, index) => {
      expect(data(frame).type).toBe(frame.event);
      expect(data(frame).sequence_number).toBe(index);
    });
  });

  it("keeps one item id from added to the final snapshot, with the full text", () => {
    const { frames, response } = run([
      { type: "text-delta", delta: "Hel" },
      { type: "text-delta", delta: "lo" },
    ]);
    const added = data(frames[2]!).item as { id: string; content: unknown[]; status: string };
    expect(added).toMatchObject({ type: "message", status: "in_progress", content: [] });
    for (const frame of frames.slice(3, 8)) expect(data(frame).item_id).toBe(added.id);
    expect(data(frames[6]!).text).toBe("Hello");
    expect(response.output).toEqual([
      {
        id: added.id,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
      },
    ]);
    expect(data(frames[9]!).response).toMatchObject({
      status: "completed",
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 2 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 1 },
        total_tokens: 15,
      },
    });
  });

  it("streams reasoning as a summary item before the message", () => {
    const { frames, response } = run([
      { type: "reasoning-delta", delta: "Think" },
      { type: "text-delta", delta: "Answer" },
    ]);
    expect(types(frames).slice(2, 8)).toEqual([
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
    ]);
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(response.output[0]).toMatchObject({
      summary: [{ type: "summary_text", text: "Think" }],
    });
    expect(data(frames[8]!)).toMatchObject({ output_index: 1 });
  });

  it("streams a function call's arguments, closing the text before it", () => {
    const { frames, response } = run(
      [
        { type: "text-delta", delta: "Let me check." },
        { type: "tool-call-start", index: 0, id: "call_1", name: "get_weather" },
        { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":' },
        { type: "tool-call-delta", index: 0, argumentsDelta: '"Paris"}' },
      ],
      "tool_calls",
    );
    expect(types(frames).slice(5)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(data(frames[8]!).item).toMatchObject({
      type: "function_call",
      status: "in_progress",
      call_id: "call_1",
      name: "get_weather",
      arguments: "",
    });
    expect(data(frames[11]!)).toMatchObject({ arguments: '{"city":"Paris"}', output_index: 1 });
    expect(response.status).toBe("completed");
    expect(response.output[1]).toMatchObject({
      type: "function_call",
      status: "completed",
      call_id: "call_1",
      arguments: '{"city":"Paris"}',
    });
  });

  it("ends a cut answer with response.incomplete and an incomplete message", () => {
    const { frames, response } = run([{ type: "text-delta", delta: "Trunc" }], "length");
    expect(frames.at(-1)?.event).toBe("response.incomplete");
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      completed_at: null,
    });
    expect(response.output[0]).toMatchObject({ status: "incomplete" });
  });

  it("ends an upstream break with error and response.failed", () => {
    const skeleton = responseSkeleton(
      { model: "m", input: "Hi" },
      { id: "resp_1", createdAt: 1, model: "m" },
    );
    const writer = new ResponsesStreamWriter(skeleton);
    const frames = [...writer.start(), ...writer.part({ type: "text-delta", delta: "Par" })];
    frames.push(...writer.failed(new Error("connection reset")));
    expect(types(frames).slice(-2)).toEqual(["error", "response.failed"]);
    expect(data(frames.at(-2)!)).toMatchObject({
      error: { code: "server_error", message: "connection reset" },
    });
    expect(data(frames.at(-1)!).response).toMatchObject({
      status: "failed",
      error: { code: "server_error", message: "connection reset" },
    });
    expect(frames.map((frame) => data(frame).sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("delivers only the first choice", () => {
    const { response } = run([
      { type: "text-delta", delta: "A" },
      { type: "text-delta", delta: "B", choice: 1 },
    ]);
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ content: [{ text: "A" }] });
  });
});
