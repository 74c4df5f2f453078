import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/index.ts";
import {
  convertResponsesRequest,
  inputItems,
  toChatCompletionRequest,
} from "./convert-responses-request.ts";
import type { ResponsesRequest } from "./schema.ts";

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("a Responses request as a chat request", () => {
  it("reads a string input as one user message after the instructions", () => {
    const { chat, warnings } = toChatCompletionRequest({
      model: "m",
      input: "Hello",
      instructions: "Be brief.",
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello" },
    ]);
    expect(warnings).toEqual([]);
  });

  it("converts message items with text and image parts, for every role", () => {
    const { chat } = toChatCompletionRequest({
      model: "m",
      input: [
        { role: "developer", content: "Rules." },
        { type: "message", role: "system", content: [{ type: "input_text", text: "More." }] },
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "low" },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "output_text", text: "A cat.", annotations: [] }],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "developer", content: "Rules." },
      { role: "system", content: [{ type: "text", text: "More." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
        ],
      },
      { role: "assistant", content: "A cat." },
    ]);
  });

  it("refuses an image given by file id, naming the part", () => {
    const convert = () =>
      toChatCompletionRequest({
        model: "m",
        input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }],
      });
    expect(convert).toThrow(GatewayError);
    expect(convert).toThrow(/input\[0\]\.content\[0\]\.image_url/);
  });

  it("merges a turn's function calls into one assistant message, outputs as tool messages", () => {
    const { chat } = toChatCompletionRequest({
      model: "m",
      input: [
        { role: "user", content: "Weather in Paris and Rome?" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "Two cities." }] },
        { role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
        {
          type: "function_call",
          call_id: "call_1",
          name: "get_weather",
          arguments: '{"city":"Paris"}',
        },
        {
          type: "function_call",
          call_id: "call_2",
          name: "get_weather",
          arguments: '{"city":"Rome"}',
        },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
        {
          type: "function_call_output",
          call_id: "call_2",
          output: [{ type: "input_text", text: "rain" }],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        reasoning_content: "Two cities.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          {
            id: "call_2",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
      { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "rain" }] },
    ]);
  });

  it("starts a new assistant message for calls made after a tool output", () => {
    const { chat } = toChatCompletionRequest({
      model: "m",
      input: [
        { role: "user", content: "Go" },
        { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "a", output: "1" },
        { type: "function_call", call_id: "b", name: "f", arguments: "{}" },
      ],
    });
    expect(chat.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(chat.messages[3]).toMatchObject({ content: null, tool_calls: [{ id: "b" }] });
  });

  it("puts the continued conversation between the instructions and the new input", () => {
    const { chat } = toChatCompletionRequest(
      { model: "m", input: "And now?", instructions: "New rules." },
      [
        { type: "message", role: "user", content: "First", id: "msg_1" },
        {
          type: "message",
          role: "assistant",
          id: "msg_2",
          status: "completed",
          content: [{ type: "output_text", text: "Answer" }],
        },
      ],
    );
    expect(chat.messages).toEqual([
      { role: "system", content: "New rules." },
      { role: "user", content: "First" },
      { role: "assistant", content: "Answer" },
      { role: "user", content: "And now?" },
    ]);
  });

  it("maps tools, tool_choice, the output cap, sampling, text format and reasoning", () => {
    const { chat, warnings } = toChatCompletionRequest({
      model: "m",
      input: "Hi",
      tools: [weatherTool],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      max_output_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      text: {
        format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
        verbosity: "low",
      },
      reasoning: { effort: "high", summary: "auto" },
      user: "u-1",
      metadata: { a: "b" },
      store: false,
      truncation: "disabled",
      stream: true,
    });
    expect(chat).toEqual({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      max_completion_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Weather of a city.",
            parameters: weatherTool.parameters,
          },
        },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object" }, strict: true },
      },
      user: "u-1",
      parallel_tool_calls: false,
      reasoning_effort: "high",
      verbosity: "low",
    });
    expect(warnings).toEqual([]);
  });

  it("maps json_object and leaves text as the default", () => {
    const json = toChatCompletionRequest({
      model: "m",
      input: "json please",
      text: { format: { type: "json_object" } },
    });
    expect(json.chat.response_format).toEqual({ type: "json_object" });
    const text = toChatCompletionRequest({
      model: "m",
      input: "x",
      text: { format: { type: "text" } },
    });
    expect(text.chat.response_format).toBeUndefined();
  });

  it("narrows the tools to allowed_tools and uses its mode", () => {
    const { chat } = toChatCompletionRequest({
      model: "m",
      input: "Hi",
      tools: [weatherTool, { ...weatherTool, name: "get_time" }],
      tool_choice: {
        type: "allowed_tools",
        mode: "required",
        tools: [{ type: "function", name: "get_time" }],
      },
    });
    expect(
      chat.tools?.map((tool) => (tool as { function: { name: string } }).function.name),
    ).toEqual(["get_time"]);
    expect(chat.tool_choice).toBe("required");
  });

  it("names fields it does not model in a warning and does not send them", () => {
    const body = { model: "m", input: "Hi", frobnicate: 1 } as ResponsesRequest;
    const { chat, warnings } = toChatCompletionRequest(body);
    expect(chat).not.toHaveProperty("frobnicate");
    expect(warnings).toEqual([expect.objectContaining({ setting: "frobnicate" })]);
  });

  it("refuses item references", () => {
    expect(() =>
      toChatCompletionRequest({ model: "m", input: [{ type: "item_reference", id: "msg_1" }] }),
    ).toThrow(/item reference/);
  });
});

describe("convertResponsesRequest", () => {
  it("gives the chat call options the chat endpoint would give", () => {
    const { options } = convertResponsesRequest(
      {
        model: "m",
        input: "Hi",
        max_output_tokens: 64,
        tools: [weatherTool],
        text: { format: { type: "json_object" } },
        reasoning: { effort: "low" },
      },
      "upstream-m",
    );
    expect(options).toMatchObject({
      upstreamModel: "upstream-m",
      messages: [{ role: "user", content: "Hi" }],
      maxOutputTokens: 64,
      temperature: 1,
      topP: 1,
      tools: [{ name: "get_weather", parameters: weatherTool.parameters }],
      responseFormat: { type: "json_object" },
      extraBody: { reasoning_effort: "low" },
    });
  });

  it("reads a missing input as no items", () => {
    expect(inputItems({})).toEqual([]);
  });
});
