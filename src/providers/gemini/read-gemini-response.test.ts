import { describe, expect, it } from "vitest";
import { readGeminiResponse } from "./read-gemini-response.ts";

describe("readGeminiResponse", () => {
  it("separates thoughts from text and reads usage", () => {
    const answer = readGeminiResponse({
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "Let me think.", thought: true },
              { text: "Hello " },
              { text: "world" },
            ],
          },
          finishReason: "STOP",
        },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, thoughtsTokenCount: 3 },
      responseId: "resp-1",
    });
    expect(answer).toMatchObject({
      id: "resp-1",
      text: "Hello world",
      reasoning: "Let me think.",
      toolCalls: [],
      finishReason: "stop",
      usage: { input: { total: 3 }, output: { total: 5, reasoning: 3 } },
    });
  });

  it("numbers function calls and reports tool_calls", () => {
    const answer = readGeminiResponse({
      candidates: [
        {
          content: {
            parts: [
              { functionCall: { name: "get_weather", args: { city: "Paris" } } },
              { functionCall: { name: "get_time" } },
            ],
          },
          finishReason: "STOP",
        },
      ],
    });
    expect(answer.text).toBeNull();
    expect(answer.toolCalls).toEqual([
      { id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
      { id: "call_1", name: "get_time", arguments: "{}" },
    ]);
    expect(answer.finishReason).toBe("tool_calls");
    expect(answer.usage).toBeUndefined();
  });

  it("treats a blocked prompt as a content filter", () => {
    expect(readGeminiResponse({ promptFeedback: { blockReason: "SAFETY" } }).finishReason).toBe(
      "content_filter",
    );
    expect(readGeminiResponse({ candidates: [{ finishReason: "SAFETY" }] })).toMatchObject({
      text: null,
      finishReason: "content_filter",
    });
  });
});
