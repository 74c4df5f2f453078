import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, postChat } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

describe("auth and validation", () => {
  const invalidKey = {
    error: {
      message: "Incorrect API key provided.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  };

  it("answers 401 with OpenAI's body without a bearer key", async () => {
    for (const authorization of ["", "Bearer ", "Basic abc"]) {
      const response = await postChat(sandbox.url, chatBody("hi"), { headers: { authorization } });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(invalidKey);
    }
  });

  it("answers 400 for a missing model or messages", async () => {
    const noModel = await postChat(sandbox.url, { messages: [{ role: "user", content: "hi" }] });
    expect(noModel.status).toBe(400);
    expect(await noModel.json()).toEqual({
      error: {
        message: "you must provide a model parameter",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
    const noMessages = await postChat(sandbox.url, { model: "gpt-4o" });
    expect(noMessages.status).toBe(400);
    expect(await noMessages.json()).toEqual({
      error: {
        message: "Missing required parameter: 'messages'.",
        type: "invalid_request_error",
        param: "messages",
        code: "missing_required_parameter",
      },
    });
  });
});

describe("official openai client", () => {
  it("creates a completion and a tool call", async () => {
    const client = new OpenAI({ baseURL: `${sandbox.url}/openai/v1`, apiKey: "sk-test" });
    const completion = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello from the SDK" }],
    });
    expect(completion.choices[0]?.message.content).toMatch(
      /^Sandbox reply to Hello from the SDK: /,
    );
    expect(completion.usage?.total_tokens).toBe(4 + 24);

    const withTool = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Weather?" }],
      tools: [
        {
          type: "function",
          function: {
            name: "lookup",
            parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
          },
        },
      ],
    });
    const call = withTool.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("lookup");
  });

  it("surfaces 401 as AuthenticationError", async () => {
    const client = new OpenAI({
      baseURL: `${sandbox.url}/openai/v1`,
      apiKey: "sk-test",
      defaultHeaders: { authorization: null },
      maxRetries: 0,
    });
    const error = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error instanceof OpenAI.APIError && error.code).toBe("invalid_api_key");
  });
});
