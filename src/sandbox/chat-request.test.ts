import { describe, expect, it } from "vitest";
import { parseChatRequest } from "./chat-request.ts";

describe("parseChatRequest", () => {
  it("normalizes texts, images, stream flags, tools and response format", () => {
    const result = parseChatRequest({
      model: "gpt-4o",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      max_completion_tokens: 9,
      response_format: { type: "json_object" },
      tool_choice: { type: "function", function: { name: "b" } },
      tools: [
        { type: "function", function: { name: "a" } },
        { type: "function", function: { name: "b", parameters: { type: "object" } } },
        { type: "function", function: {} },
      ],
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is" },
            { type: "image_url", image_url: { url: "https://example.com/a.png" } },
            { type: "text", text: "this?" },
          ],
        },
        { role: "assistant", content: null },
      ],
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { request } = result;
    expect(request.messages).toEqual([
      { role: "system", text: "Be brief.", imageCount: 0 },
      { role: "user", text: "What is\nthis?", imageCount: 1 },
      { role: "assistant", text: "", imageCount: 0 },
    ]);
    expect(request.stream).toBe(true);
    expect(request.includeUsage).toBe(true);
    expect(request.maxTokens).toBe(9);
    expect(request.jsonObject).toBe(true);
    expect(request.tools.map((tool) => tool.name)).toEqual(["a", "b"]);
    expect(request.tools[1]?.parameters).toEqual({ type: "object" });
    expect(request.toolChoice).toEqual({ name: "b" });
  });

  it("ignores include_usage without stream and reads tool_choice none", () => {
    const result = parseChatRequest({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream_options: { include_usage: true },
      tool_choice: "none",
    });
    expect(result.ok && result.request.includeUsage).toBe(false);
    expect(result.ok && result.request.toolChoice).toBe("none");
  });

  it("reports OpenAI-style validation errors", () => {
    expect(parseChatRequest({ messages: [] })).toEqual({
      ok: false,
      error: { message: "you must provide a model parameter", param: null, code: null },
    });
    expect(parseChatRequest({ model: "m" })).toEqual({
      ok: false,
      error: {
        message: "Missing required parameter: 'messages'.",
        param: "messages",
        code: "missing_required_parameter",
      },
    });
    expect(parseChatRequest({ model: "m", messages: [] })).toEqual({
      ok: false,
      error: { message: "[] is too short - 'messages'", param: "messages", code: null },
    });
    const noRole = parseChatRequest({ model: "m", messages: [{ content: "x" }] });
    expect(noRole.ok === false && noRole.error.param).toBe("messages[0].role");
    const badCap = parseChatRequest({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 0,
    });
    expect(badCap.ok === false && badCap.error.code).toBe("integer_below_min_value");
    expect(parseChatRequest("text").ok).toBe(false);
  });
});
