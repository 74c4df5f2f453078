import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, dataFrames, postChat, readAll, wordCount } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

const fault = (spec: string) => ({ headers: { "x-sandbox-fault": spec } });
const streamBody = (text: string, extra: Record<string, unknown> = {}) =>
  chatBody(text, { stream: true, ...extra });

describe("content faults", () => {
  it("omits usage with no-usage, in both modes", async () => {
    const plain = await postChat(sandbox.url, chatBody("no usage"), fault("no-usage"));
    const json = (await plain.json()) as Record<string, unknown>;
    expect("usage" in json).toBe(false);
    expect(json.object).toBe("chat.completion");
    const streamed = await postChat(
      sandbox.url,
      streamBody("no usage", { stream_options: { include_usage: true } }),
      fault("no-usage"),
    );
    const frames = dataFrames((await readAll(streamed)).text);
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame) as { choices: unknown[] });
    expect(frames.at(-1)).toBe("[DONE]");
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
  });

  it("replies with exactly n words, still capped by max_tokens", async () => {
    const five = await postChat(sandbox.url, chatBody("short"), fault("words=5"));
    const fiveJson = (await five.json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string }>;
      usage: { completion_tokens: number };
    };
    expect(wordCount(fiveJson.choices[0]?.message.content ?? "")).toBe(5);
    expect(fiveJson.choices[0]?.finish_reason).toBe("stop");
    expect(fiveJson.usage.completion_tokens).toBe(5);
    const capped = await postChat(
      sandbox.url,
      chatBody("long", { max_tokens: 10 }),
      fault("words=40"),
    );
    const cappedJson = (await capped.json()) as typeof fiveJson;
    expect(wordCount(cappedJson.choices[0]?.message.content ?? "")).toBe(10);
    expect(cappedJson.choices[0]?.finish_reason).toBe("length");
  });
});

describe("fail-times", () => {
  it("fails the first n requests per key, then succeeds", async () => {
    const keyed = (key: string) => ({
      headers: { "x-sandbox-fault": "fail-times=2", "x-sandbox-fault-key": key },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await postChat(sandbox.url, chatBody("x"), keyed("a"))).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect((await postChat(sandbox.url, chatBody("x"), keyed("b"))).status).toBe(503);

    const directive = chatBody("retry me [[sandbox:fail-times=1;status=429]]");
    expect((await postChat(sandbox.url, directive)).status).toBe(429);
    expect((await postChat(sandbox.url, directive)).status).toBe(200);
  });

  it("lets the openai client's retries get through", async () => {
    const client = new OpenAI({
      baseURL: `${sandbox.url}/openai/v1`,
      apiKey: "sk-test",
      maxRetries: 2,
      defaultHeaders: {
        "x-sandbox-fault": "fail-times=2;retry-after=0.01",
        "x-sandbox-fault-key": "sdk",
      },
    });
    const completion = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "eventually" }],
    });
    expect(completion.choices[0]?.message.content).toMatch(/^Sandbox reply to eventually: /);
    const log = (await (await fetch(`${sandbox.url}/__sandbox/requests`)).json()) as {
      requests: unknown[];
    };
    expect(log.requests).toHaveLength(3);
    expect(sandbox.stats()).toMatchObject({ requests: 3, completed: 3 });
  });

  it("surfaces a 429 as RateLimitError with no retries", async () => {
    const client = new OpenAI({
      baseURL: `${sandbox.url}/openai/v1`,
      apiKey: "sk-test",
      maxRetries: 0,
    });
    const error = await client.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "[[sandbox:status=429]]" }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error instanceof OpenAI.APIError && error.status).toBe(429);
  });
});
