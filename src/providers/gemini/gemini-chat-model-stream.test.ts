import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import type { ChatCallOptions, ChatStreamPart } from "../../spec/index.ts";
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

async function collect(parts: AsyncIterable<ChatStreamPart>): Promise<ChatStreamPart[]> {
  const seen: ChatStreamPart[] = [];
  for await (const part of parts) seen.push(part);
  return seen;
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

describe("doStream", () => {
  it("streams the same text as doGenerate, with usage on finish", async () => {
    const whole = await model.doGenerate(options("Stream me"));
    const parts = await collect(await model.doStream(options("Stream me")));
    expect((await lastRequest()).path).toBe(
      "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    );
    expect(parts[0]).toMatchObject({ type: "stream-start", warnings: [], id: expect.any(String) });
    const text = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("");
    expect(text).toBe(whole.text);
    expect(parts.filter((part) => part.type === "text-delta").length).toBeGreaterThan(3);
    expect(parts.at(-1)).toEqual({
      type: "finish",
      finishReason: "stop",
      usage: whole.usage && { ...whole.usage, raw: expect.anything() },
    });
  });

  it("streams function calls whole, and reasoning deltas first", async () => {
    const calls = await collect(await model.doStream(options("Weather?", { tools: [weather] })));
    expect(calls.map((part) => part.type)).toEqual([
      "stream-start",
      "tool-call-start",
      "tool-call-delta",
      "finish",
    ]);
    expect(calls[1]).toEqual({
      type: "tool-call-start",
      index: 0,
      id: "call_0",
      name: "get_weather",
    });
    expect(calls.at(-1)).toMatchObject({ finishReason: "tool_calls" });
    const thinking = await collect(
      await model.doStream(options("Think", { extraBody: { reasoning_effort: "medium" } })),
    );
    const kinds = thinking.map((part) => part.type).filter((type) => type.endsWith("-delta"));
    expect(kinds.indexOf("text-delta")).toBeGreaterThan(kinds.lastIndexOf("reasoning-delta"));
  });

  it("fails when the stream is cut or malformed", async () => {
    const dropped = await failure(collect(await model.doStream(options("[[sandbox:drop=2]] x"))));
    expect(["connect", "protocol"]).toContain(dropped.kind);
    const malformed = await failure(
      collect(await model.doStream(options("[[sandbox:malformed=1]] x"))),
    );
    expect(malformed.kind).toBe("protocol");
  });

  it("aborts the upstream call when the caller aborts", async () => {
    const controller = new AbortController();
    const parts = await model.doStream(
      options("[[sandbox:chunk-delay=50;words=60]] abort me", { abortSignal: controller.signal }),
    );
    const iterator = parts[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    const error = await failure(
      (async () => {
        for (;;) if ((await iterator.next()).done) return;
      })(),
    );
    expect(error.kind).toBe("aborted");
    for (let i = 0; i < 100 && sandbox.stats().aborted === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sandbox.stats().aborted).toBe(1);
  });
});
