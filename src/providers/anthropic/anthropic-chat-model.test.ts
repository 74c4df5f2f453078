import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import type { ChatCallOptions, ChatStreamPart } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { createHttpClient, type HttpClient, type UpstreamResponse } from "../kit/http-client.ts";
import { AnthropicChatModel } from "./anthropic-chat-model.ts";

let sandbox: RunningSandbox;
let http: HttpClient;
let model: AnthropicChatModel;

beforeAll(async () => {
  sandbox = await startSandbox();
  http = createHttpClient();
  model = new AnthropicChatModel({
    baseUrl: `${sandbox.url}/anthropic`,
    apiKey: "sk-ant-test",
    http,
  });
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

interface Logged {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

async function lastRequest(): Promise<Logged> {
  const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=1`)).json()) as {
    requests: Logged[];
  };
  const [request] = log.requests;
  if (!request) throw new Error("the sandbox saw no request");
  return request;
}

const ask = (text: string, extra: Partial<ChatCallOptions> = {}): ChatCallOptions => ({
  upstreamModel: "claude-haiku-4-5",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: text },
  ],
  ...extra,
});

async function collect(options: ChatCallOptions): Promise<ChatStreamPart[]> {
  const parts: ChatStreamPart[] = [];
  for await (const part of await model.doStream(options)) parts.push(part);
  return parts;
}

const textOf = (parts: ChatStreamPart[]) =>
  parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");

const weather = {
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("AnthropicChatModel against the sandbox", () => {
  it("posts the Messages request and normalizes the answer", async () => {
    const result = await model.doGenerate(
      ask("Hello there friend", { maxOutputTokens: 100, stop: ["ZZZ"] }),
    );
    const request = await lastRequest();
    expect(request.path).toBe("/anthropic/v1/messages");
    expect(request.headers).toMatchObject({
      "x-api-key": "sk-ant-test",
      "anthropic-version": "2023-06-01",
      "content-type": "application/json",
    });
    expect(request.body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 100,
      system: "You are terse.",
      messages: [{ role: "user", content: "Hello there friend" }],
      stop_sequences: ["ZZZ"],
    });
    expect(result).toEqual({
      id: expect.stringMatching(/^msg_01/),
      text: expect.stringMatching(/^Sandbox reply to Hello there friend: /),
      toolCalls: [],
      finishReason: "stop",
      usage: {
        input: { total: 6, cacheRead: 0, cacheWrite: 0 },
        output: { total: 24, reasoning: 0 },
        source: "upstream",
        raw: {
          input_tokens: 6,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 24,
        },
      },
      upstreamRequestId: expect.stringMatching(/^req_011C/),
      warnings: [],
    });
  });

  it("streams the same text and usage as the non-stream call", async () => {
    const options = ask("Conformance stream case");
    const whole = await model.doGenerate(options);
    const parts = await collect(options);
    expect((await lastRequest()).body.stream).toBe(true);
    expect(parts[0]).toMatchObject({ type: "stream-start", id: expect.stringMatching(/^msg_01/) });
    expect(textOf(parts)).toBe(whole.text);
    expect(parts.at(-1)).toEqual({
      type: "finish",
      finishReason: "stop",
      usage: { ...whole.usage, raw: expect.any(Object) },
    });
  });

  it("round-trips a tool call, with tool_use and tool_result on the wire", async () => {
    const first = await model.doGenerate(
      ask("What is the weather in Paris?", { tools: [weather] }),
    );
    expect(first.finishReason).toBe("tool_calls");
    const [call] = first.toolCalls;
    if (!call) throw new Error("expected a tool call");
    expect(call).toEqual({
      id: expect.stringMatching(/^toolu_01/),
      name: "get_weather",
      arguments: expect.any(String),
    });
    expect(typeof (JSON.parse(call.arguments) as { city: unknown }).city).toBe("string");
    expect((await lastRequest()).body.tools).toEqual([
      { name: "get_weather", description: "Current weather", input_schema: weather.parameters },
    ]);

    const second = await model.doGenerate({
      upstreamModel: "claude-haiku-4-5",
      tools: [weather],
      messages: [
        { role: "user", content: "What is the weather in Paris?" },
        { role: "assistant", content: null, toolCalls: [call] },
        { role: "tool", toolCallId: call.id, content: "Sunny, 21 degrees" },
      ],
    });
    expect(second.finishReason).toBe("stop");
    expect(second.text).toContain("Sunny, 21 degrees");
    expect((await lastRequest()).body.messages).toEqual([
      { role: "user", content: "What is the weather in Paris?" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: call.id, name: "get_weather", input: JSON.parse(call.arguments) },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: call.id, content: "Sunny, 21 degrees" }],
      },
    ]);
  });

  it("streams a tool call as start plus argument fragments", async () => {
    const options = ask("Weather in Rome?", {
      tools: [weather],
      toolChoice: { name: "get_weather" },
    });
    const whole = await model.doGenerate(options);
    const parts = await collect(options);
    const start = parts.find((part) => part.type === "tool-call-start");
    expect(start).toEqual({
      type: "tool-call-start",
      index: 0,
      id: whole.toolCalls[0]?.id,
      name: "get_weather",
    });
    const args = parts
      .map((part) => (part.type === "tool-call-delta" ? part.argumentsDelta : ""))
      .join("");
    expect(JSON.parse(args)).toEqual(JSON.parse(whole.toolCalls[0]?.arguments ?? ""));
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: "tool_calls" });
  });

  it("answers JSON mode with a parseable object, through a { prefill", async () => {
    const options = ask("Answer in JSON", { responseFormat: { type: "json_object" } });
    const result = await model.doGenerate(options);
    expect(JSON.parse(result.text ?? "")).toEqual({
      answer: expect.stringMatching(/^Sandbox reply to Answer in JSON/),
    });
    expect((await lastRequest()).body.messages).toEqual([
      { role: "user", content: "Answer in JSON" },
      { role: "assistant", content: "{" },
    ]);
    expect(textOf(await collect(options))).toBe(result.text);
  });

  it("maps max_tokens to length, and thinking to reasoning", async () => {
    const capped = await model.doGenerate(ask("Say a lot", { maxOutputTokens: 5 }));
    expect(capped.finishReason).toBe("length");
    expect(capped.usage?.output.total).toBe(5);
    const options = ask("Think", {
      extraBody: { thinking: { type: "enabled", budget_tokens: 1024 } },
    });
    const thought = await model.doGenerate(options);
    expect(thought.reasoning).toMatch(/^Sandbox thinking about the request: /);
    expect((await lastRequest()).body).toMatchObject({ max_tokens: 4096 + 1024 });
    const reasoning = (await collect(options))
      .map((part) => (part.type === "reasoning-delta" ? part.delta : ""))
      .join("");
    expect(reasoning).toBe(thought.reasoning);
  });

  it("reports cache reads and writes inside the input total, and no usage when there is none", async () => {
    const fault = (spec: string) => ({ forwardHeaders: { "x-sandbox-fault": spec } });
    const cached = await model.doGenerate(
      ask("one two three four five", fault("cached-tokens=3;cache-write-tokens=2")),
    );
    // 8 prompt tokens: 3 of system text, 5 of user text.
    expect(cached.usage?.input).toEqual({ total: 8, cacheRead: 3, cacheWrite: 2 });
    expect((await model.doGenerate(ask("hi", fault("no-usage")))).usage).toBeUndefined();
    expect((await collect(ask("hi", fault("no-usage")))).at(-1)).toEqual({
      type: "finish",
      finishReason: "stop",
      usage: undefined,
    });
  });

  it("forwards anthropic-version and anthropic-beta unchanged", async () => {
    await model.doGenerate(
      ask("hi", { forwardHeaders: { "Anthropic-Version": "2099-01-01", "anthropic-beta": "a,b" } }),
    );
    const { headers } = await lastRequest();
    expect(headers["anthropic-version"]).toBe("2099-01-01");
    expect(headers["anthropic-beta"]).toBe("a,b");
  });
});

describe("AnthropicChatModel errors", () => {
  const failing = (spec: string) => ask(`[[sandbox:${spec}]] fail`);
  const rejection = async (promise: Promise<unknown>): Promise<UpstreamError> => {
    const error: unknown = await promise.catch((caught: unknown) => caught);
    if (!UpstreamError.isInstance(error))
      throw new Error(`expected an UpstreamError, got ${String(error)}`);
    return error;
  };

  it("reads HTTP errors from the Anthropic envelope", async () => {
    expect(await rejection(model.doGenerate(failing("status=529")))).toMatchObject({
      kind: "http",
      status: 529,
      vendorCode: "overloaded_error",
      message: "Overloaded",
      retryable: true,
      upstreamRequestId: expect.stringMatching(/^req_011C/),
    });
    expect(await rejection(model.doStream(failing("status=400")))).toMatchObject({
      status: 400,
      vendorCode: "invalid_request_error",
      retryable: false,
    });
  });

  it("throws mid-stream errors, malformed frames and cut streams", async () => {
    expect(await rejection(collect(failing("status=529;malformed=3")))).toMatchObject({
      kind: "http",
      vendorCode: "overloaded_error",
    });
    expect(await rejection(collect(failing("malformed=4")))).toMatchObject({ kind: "protocol" });
    expect(UpstreamError.isInstance(await rejection(collect(failing("drop=4"))))).toBe(true);
  });

  it("aborts the upstream call when the caller does", async () => {
    const controller = new AbortController();
    const stream = await model.doStream({
      ...ask("[[sandbox:chunk-delay=50;words=60]] abort me"),
      abortSignal: controller.signal,
    });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    expect(await rejection(iterator.next())).toMatchObject({ kind: "aborted" });
    await expect.poll(() => sandbox.stats().aborted).toBe(1);
  });
});

describe("AnthropicChatModel with recorded responses", () => {
  function replay(fixture: string): AnthropicChatModel {
    const text = readFileSync(new URL(`./__fixtures__/${fixture}`, import.meta.url), "utf8");
    const response: UpstreamResponse = {
      status: 200,
      headers: { "request-id": "req_recorded" },
      body: Object.assign((async function* () {})(), {
        text: async () => text,
        json: async () => JSON.parse(text) as unknown,
        destroy: () => {},
      }),
    };
    const fake: HttpClient = {
      post: async () => response,
      get: async () => response,
      download: () => Promise.reject(new Error("no downloads here")),
      withTimeouts: () => fake,
      close: async () => {},
    };
    return new AnthropicChatModel({
      baseUrl: "https://api.anthropic.com",
      apiKey: "k",
      http: fake,
    });
  }

  it("reads thinking, text and cache usage", async () => {
    const result = await replay("anthropic-text.json").doGenerate(ask("Hello"));
    expect(result).toMatchObject({
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
      text: "Hello! How can I help you today?",
      reasoning: "The user greets me.",
      finishReason: "stop",
      usage: {
        input: { total: 2160, cacheRead: 2048, cacheWrite: 100 },
        output: { total: 30, reasoning: 0 },
      },
      upstreamRequestId: "req_recorded",
    });
  });

  it("reads text beside a tool_use block", async () => {
    const result = await replay("anthropic-tool-use.json").doGenerate(ask("Weather?"));
    expect(result.text).toBe("I'll check the weather.");
    expect(result.toolCalls).toEqual([
      {
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        arguments: '{"location":"San Francisco, CA","unit":"celsius"}',
      },
    ]);
    expect(result.finishReason).toBe("tool_calls");
  });
});
