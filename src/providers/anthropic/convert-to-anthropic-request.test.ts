import { describe, expect, it } from "vitest";
import type { ChatCallOptions } from "../../spec/index.ts";
import { convertToAnthropicRequest, DEFAULT_MAX_TOKENS } from "./convert-to-anthropic-request.ts";

const options = (extra: Partial<ChatCallOptions> = {}): ChatCallOptions => ({
  upstreamModel: "claude-haiku-4-5",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Hi" },
  ],
  ...extra,
});

describe("convertToAnthropicRequest", () => {
  it("builds the minimal body with the default max_tokens", () => {
    expect(convertToAnthropicRequest(options(), false)).toEqual({
      body: {
        model: "claude-haiku-4-5",
        max_tokens: DEFAULT_MAX_TOKENS,
        system: "You are terse.",
        messages: [{ role: "user", content: "Hi" }],
      },
      warnings: [],
      prefill: undefined,
    });
    expect(convertToAnthropicRequest(options(), true).body.stream).toBe(true);
  });

  it("maps settings and warns about what Anthropic lacks", () => {
    const { body, warnings } = convertToAnthropicRequest(
      options({
        maxOutputTokens: 50,
        temperature: 1.6,
        stop: ["END"],
        presencePenalty: 0.5,
        frequencyPenalty: 0.5,
        seed: 7,
        user: "user-42",
        extraBody: { logprobs: true, top_k: 20 },
      }),
      false,
    );
    expect(body).toMatchObject({
      max_tokens: 50,
      temperature: 1,
      top_k: 20,
      stop_sequences: ["END"],
      metadata: { user_id: "user-42" },
    });
    expect(body).not.toHaveProperty("logprobs");
    expect(warnings).toEqual([
      { type: "unsupported", setting: "logprobs" },
      {
        type: "compatibility",
        setting: "temperature",
        details: "1.6 is above Anthropic's maximum; sent 1",
      },
      { type: "unsupported", setting: "presence_penalty" },
      { type: "unsupported", setting: "frequency_penalty" },
      { type: "unsupported", setting: "seed" },
    ]);
  });

  it("sends top_p alone, and temperature rather than both (newer Claude models refuse both)", () => {
    expect(convertToAnthropicRequest(options({ topP: 0.9 }), false).body.top_p).toBe(0.9);
    const { body, warnings } = convertToAnthropicRequest(
      options({ temperature: 0.5, topP: 0.9 }),
      false,
    );
    expect(body.temperature).toBe(0.5);
    expect(body).not.toHaveProperty("top_p");
    expect(warnings).toEqual([
      {
        type: "unsupported",
        setting: "top_p",
        details: "dropped: Anthropic takes temperature or top_p, not both",
      },
    ]);
  });

  it("keeps max_tokens with the thinking budget within the model's output limit", () => {
    const thinking = { type: "enabled", budget_tokens: 2048 };
    const within = convertToAnthropicRequest(
      options({
        maxOutputTokens: 64_000,
        modelRules: { outputLimit: 64_000 },
        extraBody: { thinking },
      }),
      false,
    );
    expect(within.body).toMatchObject({ max_tokens: 64_000, thinking });
    expect(within.warnings).toEqual([expect.objectContaining({ setting: "max_tokens" })]);
    const squeezed = convertToAnthropicRequest(
      options({
        maxOutputTokens: 1_500,
        modelRules: { outputLimit: 1_500 },
        extraBody: { thinking: { type: "enabled", budget_tokens: 4096 } },
      }),
      false,
    );
    expect(squeezed.body).toMatchObject({
      max_tokens: 1_500,
      thinking: { type: "enabled", budget_tokens: 1_499 },
    });
    const dropped = convertToAnthropicRequest(
      options({
        modelRules: { outputLimit: 1_000 },
        maxOutputTokens: 1_000,
        extraBody: { thinking },
      }),
      false,
    );
    expect(dropped.body.max_tokens).toBe(1_000);
    expect(dropped.body).not.toHaveProperty("thinking");
  });

  it("warns that more than one choice is not served", () => {
    expect(convertToAnthropicRequest(options({ choiceCount: 2 }), false).warnings).toEqual([
      { type: "unsupported", setting: "n", details: "one choice per request" },
    ]);
  });

  it("answers a JSON schema through a forced output tool, wrapping a non-object root", () => {
    const schema = { type: "object", properties: { a: { type: "number" } } };
    const { body, prefill, outputTool, warnings } = convertToAnthropicRequest(
      options({ responseFormat: { type: "json_schema", name: "answer", schema } }),
      false,
    );
    expect(prefill).toBeUndefined();
    expect(outputTool).toEqual({ name: "answer", wrapped: false });
    expect(body.tools).toEqual([
      { name: "answer", description: expect.any(String), input_schema: schema },
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "answer" });
    expect(body.system).toBe("You are terse.");
    expect(warnings).toEqual([]);

    const list = {
      type: "array",
      items: { $ref: "#/$defs/item" },
      $defs: { item: { type: "string" } },
    };
    const wrapped = convertToAnthropicRequest(
      options({ responseFormat: { type: "json_schema", name: "list", schema: list } }),
      false,
    );
    expect(wrapped.outputTool).toEqual({ name: "list", wrapped: true });
    expect(wrapped.body.tools?.[0]?.input_schema).toEqual({
      type: "object",
      properties: { value: { type: "array", items: { $ref: "#/$defs/item" } } },
      required: ["value"],
      additionalProperties: false,
      $defs: { item: { type: "string" } },
    });
  });

  it("offers the output tool beside the client's tools, unforced, under a distinct name", () => {
    const { body, outputTool, warnings } = convertToAnthropicRequest(
      options({
        responseFormat: { type: "json_schema", name: "f", schema: { type: "object" } },
        tools: [{ name: "f" }],
        toolChoice: "auto",
      }),
      false,
    );
    expect(outputTool).toEqual({ name: "f_2", wrapped: false });
    expect(body.tools?.map((tool) => tool.name)).toEqual(["f", "f_2"]);
    expect(body.tool_choice).toEqual({ type: "auto" });
    expect(body.system).toMatch(/calling the tool `f_2`/);
    expect(warnings).toEqual([expect.objectContaining({ setting: "response_format" })]);
  });

  it("implements JSON mode with a system instruction and a { prefill", () => {
    const { body, prefill } = convertToAnthropicRequest(
      options({ responseFormat: { type: "json_object" } }),
      false,
    );
    expect(prefill).toBe("{");
    expect(body.system).toMatch(/^You are terse\.\n\nRespond with a single valid JSON object/);
    expect(body.messages.at(-1)).toEqual({ role: "assistant", content: "{" });
  });

  it("does not prefill when tools are on, and warns", () => {
    const { body, prefill, warnings } = convertToAnthropicRequest(
      options({ responseFormat: { type: "json_object" }, tools: [{ name: "f" }] }),
      false,
    );
    expect(prefill).toBeUndefined();
    expect(body.messages.at(-1)?.role).toBe("user");
    expect(warnings).toEqual([expect.objectContaining({ setting: "response_format" })]);
  });

  it("passes Anthropic thinking through, adds its budget to max_tokens, drops sampling", () => {
    const { body, warnings } = convertToAnthropicRequest(
      options({
        maxOutputTokens: 1000,
        temperature: 0.2,
        tools: [{ name: "f" }],
        toolChoice: "required",
        extraBody: {
          thinking: { type: "enabled", budget_tokens: 2048 },
          parallel_tool_calls: false,
        },
      }),
      false,
    );
    expect(body).toMatchObject({
      max_tokens: 3048,
      thinking: { type: "enabled", budget_tokens: 2048 },
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    expect(body).not.toHaveProperty("temperature");
    expect(warnings).toEqual([
      { type: "unsupported", setting: "temperature", details: "not allowed with thinking" },
    ]);
  });
});
