import { describe, expect, it } from "vitest";
import { normalizeAnthropicRequest } from "./anthropic-normalize.ts";
import { applyStopSequences, planAnthropicReply } from "./anthropic-reply.ts";
import { type AnthropicRequest, parseAnthropicRequest } from "./anthropic-request.ts";
import { planChatReply } from "./chat-reply.ts";
import { parseChatRequest } from "./chat-request.ts";

function parse(body: Record<string, unknown>): AnthropicRequest {
  const result = parseAnthropicRequest({ model: "claude-haiku-4-5", max_tokens: 100, ...body });
  if (!result.ok) throw new Error(result.message);
  return result.request;
}

function problem(body: Record<string, unknown>, kind?: "count_tokens"): string {
  const result = parseAnthropicRequest(body, kind);
  if (result.ok) throw new Error("expected a validation error");
  return result.message;
}

const user = (content: unknown) => ({ role: "user", content });
const base = { model: "m", max_tokens: 10, messages: [user("hi")] };

describe("parseAnthropicRequest", () => {
  it("rejects missing and invalid required fields with Anthropic's wording", () => {
    expect(problem({ model: "m", messages: [user("hi")] })).toBe("max_tokens: Field required");
    expect(problem({ ...base, max_tokens: 0 })).toBe(
      "max_tokens: Input should be greater than or equal to 1",
    );
    expect(problem({ ...base, max_tokens: 1.5 })).toBe(
      "max_tokens: Input should be a valid integer",
    );
    expect(problem({ ...base, model: undefined })).toBe("model: Field required");
    expect(problem({ ...base, messages: [] })).toBe("messages: at least one message is required");
    expect(problem({ ...base, messages: [{ role: "system", content: "x" }] })).toBe(
      "messages.0.role: Input should be 'user' or 'assistant'",
    );
    expect(problem({ ...base, messages: [user([{ type: "video" }])] })).toMatch(
      /^messages\.0\.content\.0: Input tag 'video' found using 'type' does not match/,
    );
    expect(
      problem({ ...base, messages: [user([{ type: "tool_use", id: "t", name: "n", input: {} }])] }),
    ).toBe("messages.0.content.0: tool_use blocks are only allowed in assistant turns");
    expect(
      problem({
        ...base,
        messages: [
          user([{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "x" } }]),
        ],
      }),
    ).toMatch(/^messages\.0\.content\.0\.source\.media_type: Input should be 'image\/jpeg'/);
    expect(problem({ ...base, temperature: 1.5 })).toBe(
      "temperature: Input should be between 0 and 1",
    );
    expect(problem({ ...base, tools: [{ name: "t" }] })).toBe(
      "tools.0.input_schema: Field required",
    );
    expect(problem({ ...base, tool_choice: { type: "tool" } })).toBe(
      "tool_choice.name: Field required",
    );
    expect(problem({ ...base, thinking: { type: "enabled", budget_tokens: 512 } })).toBe(
      "thinking.budget_tokens: Input should be greater than or equal to 1024",
    );
    expect(problem({ ...base, thinking: { type: "enabled", budget_tokens: 2048 } })).toBe(
      "max_tokens: must be greater than thinking.budget_tokens",
    );
    expect(problem({ ...base, messages: [user("q"), { role: "assistant", content: "a " }] })).toBe(
      "messages: final assistant content cannot end with trailing whitespace",
    );
  });

  it("accepts a Claude Code-shaped body, ignoring server tools and unknown fields", () => {
    const request = parse({
      system: [
        { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.88" },
        { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
      ],
      messages: [
        user([{ type: "text", text: "List files", cache_control: { type: "ephemeral" } }]),
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Let me look.", signature: "sig" },
            { type: "redacted_thinking", data: "opaque" },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
          ],
        },
        user([
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "text", text: "a.txt" }],
          },
        ]),
      ],
      tools: [
        { name: "Bash", description: "Run a command", input_schema: { type: "object" } },
        { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      ],
      tool_choice: { type: "auto" },
      thinking: { type: "adaptive" },
      metadata: { user_id: "user_abc" },
      context_management: { edits: [] },
      stream: true,
    });
    expect(request.system).toBe(
      "x-anthropic-billing-header: cc_version=2.1.88\nYou are Claude Code.",
    );
    expect(request.tools).toEqual([{ name: "Bash", inputSchema: { type: "object" } }]);
    expect(request.thinking).toBe(true);
    expect(request.stream).toBe(true);
    expect(parseAnthropicRequest({ model: "m", messages: [user("hi")] }, "count_tokens").ok).toBe(
      true,
    );
  });
});

describe("normalizeAnthropicRequest", () => {
  it("builds the OpenAI-shaped conversation the shared planner reads", () => {
    const { chat, prefill } = normalizeAnthropicRequest(
      parse({
        system: "Be brief.",
        tools: [{ name: "get_weather", input_schema: { type: "object" } }],
        tool_choice: { type: "tool", name: "get_weather" },
        messages: [
          user([
            { type: "text", text: "Compare" },
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
          ]),
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
            ],
          },
          user([
            { type: "tool_result", tool_use_id: "toolu_1", content: "Rain" },
            { type: "text", text: "And now?" },
          ]),
        ],
      }),
    );
    expect(prefill).toBeUndefined();
    expect(chat.messages).toEqual([
      { role: "system", text: "Be brief.", imageCount: 0 },
      { role: "user", text: "Compare", imageCount: 1 },
      { role: "assistant", text: "", imageCount: 0 },
      { role: "user", text: "And now?", imageCount: 0 },
      { role: "tool", text: "Rain", imageCount: 0 },
    ]);
    expect(chat.rawMessages[3]).toEqual({ role: "user", content: "And now?" });
    expect(chat.rawMessages[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "toolu_1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
        },
      ],
    });
    expect(chat.toolChoice).toEqual({ name: "get_weather" });
  });

  it("gives the same text as the OpenAI planner for the same conversation and model", () => {
    const openai = parseChatRequest({
      model: "claude-haiku-4-5",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Conformance text case" },
      ],
    });
    if (!openai.ok) throw new Error(openai.error.message);
    const expected = planChatReply(openai.request);
    const request = parse({ system: "You are terse.", messages: [user("Conformance text case")] });
    const plan = planAnthropicReply(request, normalizeAnthropicRequest(request));
    expect(plan.blocks).toEqual([
      { type: "text", text: expected.reply.kind === "text" ? expected.reply.content : "" },
    ]);
    expect(plan.usage.input_tokens).toBe(expected.promptTokens);
  });

  it("continues a { prefill with the rest of a JSON object", () => {
    const request = parse({
      messages: [user("Answer in JSON"), { role: "assistant", content: "{" }],
    });
    const normalized = normalizeAnthropicRequest(request);
    expect(normalized.prefill).toBe("{");
    expect(normalized.chat.messages.map((message) => message.role)).toEqual(["user"]);
    const [block] = planAnthropicReply(request, normalized).blocks;
    const text = block?.type === "text" ? block.text : "";
    expect(JSON.parse(`{${text}`)).toEqual({
      answer: expect.stringMatching(/^Sandbox reply to Answer in JSON: /),
    });
  });
});

describe("planAnthropicReply", () => {
  it("puts a signed thinking block first and counts it in output and max_tokens", () => {
    const request = parse({
      max_tokens: 10,
      thinking: { type: "adaptive" },
      messages: [user("Think")],
    });
    const plan = planAnthropicReply(request, normalizeAnthropicRequest(request));
    expect(plan.blocks.map((block) => block.type)).toEqual(["thinking", "text"]);
    const [thinking] = plan.blocks;
    expect(thinking?.type === "thinking" && thinking.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(plan.usage.output_tokens).toBe(10);
    expect(plan.stopReason).toBe("max_tokens");
  });

  it("splits prompt tokens into uncached input, cache reads and cache writes", () => {
    const request = parse({ messages: [user("one two three four five six")] });
    const plan = planAnthropicReply(request, normalizeAnthropicRequest(request), {
      cachedTokens: 4,
      cacheWriteTokens: 10,
    });
    expect(plan.usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 2,
    });
  });

  it("stops at the earliest stop sequence", () => {
    expect(applyStopSequences("alpha beta gamma", ["gamma", "beta"])).toEqual({
      text: "alpha ",
      sequence: "beta",
    });
    expect(applyStopSequences("alpha", ["zeta", ""])).toEqual({ text: "alpha", sequence: null });
  });
});
