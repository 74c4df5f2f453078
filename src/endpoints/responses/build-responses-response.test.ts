import { describe, expect, it } from "vitest";
import { buildResponsesResponse } from "./build-responses-response.ts";

const usage = {
  input: { total: 30, cacheRead: 10, cacheWrite: 4 },
  output: { total: 12, reasoning: 5 },
  source: "upstream" as const,
};
const head = { id: "resp_abc", createdAt: 1_700_000_000, model: "gpt-4o-mini" };

describe("the Response object", () => {
  it("carries reasoning, message and function call items, usage and echoed settings", () => {
    const response = buildResponsesResponse({
      body: {
        model: "alias",
        input: "Hi",
        instructions: "Be brief.",
        tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
        metadata: { k: "v" },
        temperature: 0.5,
        store: false,
      },
      head,
      result: {
        text: "Hello",
        reasoning: "Thinking",
        toolCalls: [{ id: "call_9", name: "f", arguments: "{}" }],
        finishReason: "tool_calls",
      },
      usage,
      now: 1_700_000_001_500,
    });
    expect(response).toMatchObject({
      id: "resp_abc",
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      completed_at: 1_700_000_001,
      error: null,
      incomplete_details: null,
      instructions: "Be brief.",
      model: "gpt-4o-mini",
      temperature: 0.5,
      top_p: 1,
      store: false,
      metadata: { k: "v" },
      tool_choice: "auto",
      parallel_tool_calls: true,
      text: { format: { type: "text" } },
      tools: [
        {
          type: "function",
          name: "f",
          description: null,
          parameters: { type: "object" },
          strict: true,
        },
      ],
      usage: {
        input_tokens: 30,
        input_tokens_details: { cached_tokens: 10, cache_write_tokens: 4 },
        output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 42,
      },
    });
    expect(response).not.toHaveProperty("output_text");
    const [reasoning, message, call] = response.output;
    expect(reasoning).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Thinking" }],
    });
    expect(reasoning?.id).toMatch(/^rs_/);
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Hello", annotations: [] }],
    });
    expect(message?.id).toMatch(/^msg_/);
    expect(call).toMatchObject({
      type: "function_call",
      call_id: "call_9",
      name: "f",
      arguments: "{}",
      status: "completed",
    });
    expect(call?.id).toMatch(/^fc_/);
  });

  it("is incomplete when the answer was cut, and has no empty message", () => {
    const cut = buildResponsesResponse({
      body: { model: "m", input: "Hi" },
      head,
      result: { text: "Part", toolCalls: [], finishReason: "length" },
      usage,
      now: 0,
    });
    expect(cut).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      completed_at: null,
    });
    expect(cut.output[0]).toMatchObject({ status: "incomplete" });
    const filtered = buildResponsesResponse({
      body: { model: "m", input: "Hi" },
      head,
      result: { text: null, toolCalls: [], finishReason: "content_filter" },
      usage,
      now: 0,
    });
    expect(filtered.incomplete_details).toEqual({ reason: "content_filter" });
    expect(filtered.output).toEqual([]);
  });
});
