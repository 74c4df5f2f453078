import { describe, expect, it } from "vitest";
import { countPromptTokens, planChatReply, requestSeed, toolCallArguments } from "./chat-reply.ts";
import { type ChatRequest, parseChatRequest } from "./chat-request.ts";

function request(body: Record<string, unknown>): ChatRequest {
  const result = parseChatRequest({ model: "gpt-4o", ...body });
  if (!result.ok) throw new Error(result.error.message);
  return result.request;
}

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer" },
        verbose: { type: "boolean" },
      },
      required: ["city", "unit", "days", "verbose"],
    },
  },
};

describe("planChatReply", () => {
  const hello = request({
    messages: [{ role: "user", content: "Hello there my good friend, how are you?" }],
  });

  it("answers 24 words led by an echo of the last user message", () => {
    const plan = planChatReply(hello);
    expect(plan.reply.kind).toBe("text");
    if (plan.reply.kind !== "text") return;
    expect(
      plan.reply.content.startsWith("Sandbox reply to Hello there my good friend, how: "),
    ).toBe(true);
    expect(plan.reply.content.split(" ")).toHaveLength(24);
    expect(plan.reply.finishReason).toBe("stop");
    expect(plan.completionTokens).toBe(24);
    expect(plan.promptTokens).toBe(8);
    expect(planChatReply(hello)).toEqual(plan);
  });

  it("honours words and caps them with max_tokens", () => {
    const five = planChatReply(hello, { words: 5 });
    expect(five.reply.kind === "text" && five.reply.content).toBe("Sandbox reply to Hello there");
    const capped = planChatReply(
      request({ messages: [{ role: "user", content: "x" }], max_tokens: 4 }),
    );
    expect(capped.reply.finishReason).toBe("length");
    expect(capped.completionTokens).toBe(4);
  });

  it("wraps the text in a JSON object for json_object", () => {
    const plan = planChatReply(
      request({
        messages: [{ role: "user", content: "Hi" }],
        response_format: { type: "json_object" },
      }),
    );
    if (plan.reply.kind !== "text") throw new Error("expected text");
    const parsed: unknown = JSON.parse(plan.reply.content);
    expect(parsed).toEqual({ answer: expect.stringMatching(/^Sandbox reply to Hi: /) });
    expect(plan.completionTokens).toBe(24);
  });

  it("calls the first tool after a user message, and reads tool results", () => {
    const call = planChatReply(
      request({ messages: [{ role: "user", content: "Weather?" }], tools: [weatherTool] }),
    );
    expect(call.reply.kind).toBe("tool_call");
    if (call.reply.kind !== "tool_call") return;
    expect(call.reply.finishReason).toBe("tool_calls");
    expect(call.reply.call.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(call.reply.call.name).toBe("get_weather");
    const args = JSON.parse(call.reply.call.arguments) as Record<string, unknown>;
    expect(args.city).toMatch(/^[a-z]+$/);
    expect(args.unit).toBe("celsius");
    expect(args.verbose).toBe(true);
    expect(Number.isInteger(args.days)).toBe(true);

    const after = planChatReply(
      request({
        tools: [weatherTool],
        messages: [
          { role: "user", content: "Weather?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: "{}" },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "21 degrees and sunny" },
        ],
      }),
    );
    expect(after.reply.kind === "text" && after.reply.content).toMatch(
      /^Sandbox reply using tool result: 21 degrees and sunny /,
    );
    const none = planChatReply(
      request({
        messages: [{ role: "user", content: "x" }],
        tools: [weatherTool],
        tool_choice: "none",
      }),
    );
    expect(none.reply.kind).toBe("text");
  });

  it("mentions images and charges for them", () => {
    const images = request({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Compare these" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "image_url", image_url: { url: "https://example.com/b.png" } },
          ],
        },
      ],
    });
    const plan = planChatReply(images);
    expect(plan.reply.kind === "text" && plan.reply.content).toMatch(
      /^Sandbox reply to Compare these: I saw 2 images\. /,
    );
    expect(plan.promptTokens).toBe(2 + 2 * 85);
  });
});

describe("helpers", () => {
  it("counts at least one prompt token per message", () => {
    expect(
      countPromptTokens([
        { role: "system", text: "", imageCount: 0 },
        { role: "user", text: "a b c", imageCount: 1 },
      ]),
    ).toBe(1 + 3 + 85);
  });

  it("seeds on the messages alone, so every vendor emulation gives the same reply", () => {
    const a = request({ messages: [{ role: "user", content: "x" }] });
    const b = request({ model: "other", messages: [{ role: "user", content: "x" }] });
    const c = request({ messages: [{ role: "user", content: "y" }] });
    expect(requestSeed(a)).toBe(requestSeed(b));
    expect(requestSeed(a)).not.toBe(requestSeed(c));
  });

  it("fills a tool's required arguments from the schema, leaves optional ones out, and gives {} without one", () => {
    expect(toolCallArguments({ name: "noop", parameters: undefined }, 1)).toBe("{}");
    const parameters = {
      type: "object",
      properties: {
        q: { type: "string" },
        unit: { type: "string", enum: ["c", "f"] },
        at: {
          type: "object",
          properties: {
            day: { type: "integer", minimum: 1, maximum: 7 },
            hour: { type: "integer" },
          },
          required: ["day"],
        },
        path: { type: "string" },
      },
      required: ["q", "unit", "at"],
    };
    const args = JSON.parse(toolCallArguments({ name: "t", parameters }, 1));
    expect(args).toEqual({
      q: expect.stringMatching(/^[a-z]+$/),
      unit: expect.stringMatching(/^[cf]$/),
      at: { day: expect.any(Number) },
    });
    expect(args.at.day).toBeGreaterThanOrEqual(1);
    expect(args.at.day).toBeLessThanOrEqual(7);
  });
});
