import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import type { ChatCallOptions } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { GeminiChatModel } from "./gemini-chat-model.ts";

let sandbox: RunningSandbox;
let http: HttpClient;
let model: GeminiChatModel;

beforeAll(async () => {
  sandbox = await startSandbox();
  http = createHttpClient();
  model = new GeminiChatModel({ baseUrl: `${sandbox.url}/gemini/v1beta`, apiKey: "g-key", http });
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
  if (!request) throw new Error("no request logged");
  return request;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (UpstreamError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

const options = (text: string, extra: Partial<ChatCallOptions> = {}): ChatCallOptions => ({
  upstreamModel: "gemini-2.5-flash",
  messages: [{ role: "user", content: text }],
  ...extra,
});

const weather = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
};

describe("doGenerate", () => {
  it("posts generateContent with x-goog-api-key and reads the answer", async () => {
    const result = await model.doGenerate(
      options("Hello there", {
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "Hello there" },
        ],
        maxOutputTokens: 50,
        temperature: 0.2,
      }),
    );
    const request = await lastRequest();
    expect(request.path).toBe("/gemini/v1beta/models/gemini-2.5-flash:generateContent");
    expect(request.headers["x-goog-api-key"]).toBe("g-key");
    expect(request.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hello there" }] }],
      systemInstruction: { parts: [{ text: "You are terse." }] },
      generationConfig: { maxOutputTokens: 50, temperature: 0.2 },
    });
    expect(result.text).toMatch(/^Sandbox reply to Hello there: /);
    expect(result).toMatchObject({
      finishReason: "stop",
      toolCalls: [],
      usage: {
        input: { total: 5, cacheRead: 0, cacheWrite: 0 },
        output: { total: 24, reasoning: 0 },
        source: "upstream",
      },
      warnings: [],
    });
    expect(result.id).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(result.upstreamRequestId).toBe(result.id);
  });

  it("does a tool round trip, mapping results back by function name", async () => {
    const first = await model.doGenerate(options("Weather in Paris?", { tools: [weather] }));
    expect((await lastRequest()).body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "Current weather for a city",
            parameters: {
              type: "object",
              properties: { city: { type: "string" } },
              required: ["city"],
            },
          },
        ],
      },
    ]);
    expect(first.finishReason).toBe("tool_calls");
    expect(first.text).toBeNull();
    const [call] = first.toolCalls;
    expect(call).toMatchObject({ id: "call_0", name: "get_weather" });
    expect(JSON.parse(call?.arguments ?? "")).toEqual({ city: expect.stringMatching(/^[a-z]+/) });
    if (!call) throw new Error("expected a tool call");

    const second = await model.doGenerate(
      options("", {
        tools: [weather],
        messages: [
          { role: "user", content: "Weather in Paris?" },
          { role: "assistant", content: null, toolCalls: [call] },
          { role: "tool", toolCallId: call.id, content: "Sunny, 21 degrees" },
        ],
      }),
    );
    expect((await lastRequest()).body.contents).toEqual([
      { role: "user", parts: [{ text: "Weather in Paris?" }] },
      {
        role: "model",
        parts: [{ functionCall: { name: "get_weather", args: JSON.parse(call.arguments) } }],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { content: "Sunny, 21 degrees" } } },
        ],
      },
    ]);
    expect(second.finishReason).toBe("stop");
    expect(second.text).toContain("Sunny, 21 degrees");
  });

  it("sends images, JSON mode and a forced tool, and reports the cap", async () => {
    const image = await model.doGenerate(
      options("", {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Describe" },
              { type: "image", url: "data:image/png;base64,AAAA" },
            ],
          },
        ],
      }),
    );
    expect(image.text).toMatch(/I saw 1 image\./);
    const json = await model.doGenerate(
      options("JSON", { responseFormat: { type: "json_object" } }),
    );
    expect(JSON.parse(json.text ?? "")).toEqual({ answer: expect.any(String) });
    const forced = await model.doGenerate(
      options("Hi", { tools: [weather, { name: "ping" }], toolChoice: { name: "ping" } }),
    );
    expect((await lastRequest()).body.toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["ping"] },
    });
    expect(forced.toolCalls).toEqual([{ id: "call_0", name: "ping", arguments: "{}" }]);
    const capped = await model.doGenerate(options("Say a lot", { maxOutputTokens: 5 }));
    expect(capped).toMatchObject({ finishReason: "length", usage: { output: { total: 5 } } });
  });

  it("returns thought summaries as reasoning, counted in the output", async () => {
    const result = await model.doGenerate(
      options("Think", { extraBody: { reasoning_effort: "low" } }),
    );
    expect((await lastRequest()).body.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    expect(result.reasoning).toMatch(/^Thinking: /);
    expect(result.text).toMatch(/^Sandbox reply to Think: /);
    expect(result.usage?.output).toEqual({ total: 24 + 12, reasoning: 12 });
  });

  it("reads cached tokens, no usage, and warns about user", async () => {
    const cached = await model.doGenerate(
      options("[[sandbox:cached-tokens=2]] a b c", { user: "u1" }),
    );
    expect(cached.usage?.input).toEqual({ total: 4, cacheRead: 2, cacheWrite: 0 });
    expect(cached.warnings).toEqual([{ type: "unsupported", setting: "user" }]);
    const bare = await model.doGenerate(options("[[sandbox:no-usage]] hi"));
    expect(bare.usage).toBeUndefined();
  });
});

describe("errors", () => {
  it("reads Google's envelope into retryable and final UpstreamErrors", async () => {
    const limited = await failure(model.doGenerate(options("[[sandbox:status=429]] x")));
    expect(limited).toMatchObject({
      kind: "http",
      status: 429,
      vendorCode: "RESOURCE_EXHAUSTED",
      retryable: true,
    });
    const rejected = await failure(model.doGenerate(options("[[sandbox:status=400]] x")));
    expect(rejected).toMatchObject({
      status: 400,
      vendorCode: "INVALID_ARGUMENT",
      retryable: false,
    });
    expect(rejected.message).toBe("Request contains an invalid argument.");
    const keyless = new GeminiChatModel({
      baseUrl: `${sandbox.url}/gemini/v1beta`,
      apiKey: "",
      http,
    });
    const unauthorized = await failure(keyless.doGenerate(options("x")));
    expect(unauthorized.message).toBe("API key not valid. Please pass a valid API key.");
    // Google's 400 for a bad key is the gateway's credential failing, read as the 401 it means
    // (a bad request keeps its 400 above).
    expect(unauthorized).toMatchObject({ status: 401, vendorCode: "INVALID_ARGUMENT" });
    const streamRejected = await failure(model.doStream(options("[[sandbox:status=503]] x")));
    expect(streamRejected).toMatchObject({
      status: 503,
      vendorCode: "UNAVAILABLE",
      retryable: true,
    });
  });

  it("fails with a protocol error on a malformed answer", async () => {
    const error = await failure(model.doGenerate(options("[[sandbox:malformed=0]] x")));
    expect(error.kind).toBe("protocol");
  });
});
