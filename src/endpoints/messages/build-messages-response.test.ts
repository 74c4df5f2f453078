import { describe, expect, it } from "vitest";
import type { ChatFinishReason, ChatResult, TokenUsage } from "../../spec/index.ts";
import { buildMessagesResponse, signThinking } from "./build-messages-response.ts";

const usage: TokenUsage = {
  input: { total: 1000, cacheRead: 600, cacheWrite: 150 },
  output: { total: 42, reasoning: 10 },
  source: "upstream",
};

function result(overrides: Partial<ChatResult> = {}): ChatResult {
  return {
    text: "Hello.",
    toolCalls: [],
    finishReason: "stop",
    usage,
    warnings: [],
    ...overrides,
  };
}

function build(overrides: Partial<ChatResult> = {}, stopSequences?: string[]) {
  return buildMessagesResponse({
    id: "msg_1",
    model: "claude-sonnet-4-5",
    result: result(overrides),
    usage,
    ...(stopSequences ? { stopSequences } : {}),
  });
}

describe("signThinking", () => {
  it("is deterministic, opaque and depends on the text", () => {
    expect(signThinking("abc")).toBe(signThinking("abc"));
    expect(signThinking("abc")).not.toBe(signThinking("abd"));
    expect(signThinking("abc")).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(signThinking("abc")).not.toContain("abc");
  });
});

describe("buildMessagesResponse", () => {
  it("builds a text message with Anthropic's usage split", () => {
    expect(build()).toEqual({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "Hello." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 250,
        cache_read_input_tokens: 600,
        cache_creation_input_tokens: 150,
        output_tokens: 42,
      },
    });
  });

  it.each<[ChatFinishReason, string]>([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
    ["error", "end_turn"],
    ["other", "end_turn"],
  ])("maps finish reason %s to %s", (finishReason, stopReason) => {
    expect(build({ finishReason }).stop_reason).toBe(stopReason);
  });

  it("orders thinking, text and tool_use blocks and parses arguments", () => {
    const message = build({
      reasoning: "Think first.",
      text: "Let me look.",
      finishReason: "tool_calls",
      toolCalls: [
        { id: "call_a", name: "Read", arguments: '{"path":"a.txt"}' },
        { id: "toolu_b", name: "Bash", arguments: '{"command":' },
        { id: "call_c", name: "List", arguments: "" },
        { id: "call_d", name: "Array", arguments: "[1]" },
      ],
    });
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Think first.", signature: signThinking("Think first.") },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "call_a", name: "Read", input: { path: "a.txt" } },
      { type: "tool_use", id: "toolu_b", name: "Bash", input: {} },
      { type: "tool_use", id: "call_c", name: "List", input: {} },
      { type: "tool_use", id: "call_d", name: "Array", input: {} },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("omits empty text, answers tool_use for tool calls with a plain stop, and fills missing ids", () => {
    const message = build({
      text: "",
      finishReason: "stop",
      toolCalls: [{ id: "", name: "Read", arguments: "{}" }],
    });
    expect(message.content).toEqual([
      { type: "tool_use", id: expect.stringMatching(/^toolu_[\w-]{24}$/), name: "Read", input: {} },
    ]);
    expect(message.content[0]?.id).toBe(
      build({ text: null, toolCalls: [{ id: "", name: "Read", arguments: "{}" }] }).content[0]?.id,
    );
    expect(message.stop_reason).toBe("tool_use");
  });

  it("reports a stop sequence the upstream left at the end of the text", () => {
    const message = build({ text: "Done.\n\nHuman:" }, ["\n\nHuman:"]);
    expect(message.content).toEqual([{ type: "text", text: "Done." }]);
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("\n\nHuman:");
    expect(build({ text: "Done." }, ["\n\nHuman:"]).stop_reason).toBe("end_turn");
  });

  it("never reports negative input tokens", () => {
    const message = buildMessagesResponse({
      id: "msg_1",
      model: "m",
      result: result(),
      usage: { ...usage, input: { total: 10, cacheRead: 20, cacheWrite: 0 } },
    });
    expect(message.usage.input_tokens).toBe(0);
  });
});
