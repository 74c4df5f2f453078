import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { messagesBody, postMessages } from "./anthropic-test-kit.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { waitFor, wordCount } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

interface Message {
  id: string;
  type: string;
  role: string;
  model: string;
  content: Array<Record<string, unknown>>;
  stop_reason: string;
  stop_sequence: string | null;
  usage?: Record<string, number>;
}

interface ErrorEnvelope {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

async function message(body: unknown, headers?: Record<string, string>): Promise<Message> {
  const response = await postMessages(sandbox.url, body, headers ? { headers } : {});
  expect(response.status).toBe(200);
  return (await response.json()) as Message;
}

async function failure(response: Response, status: number, type: string): Promise<ErrorEnvelope> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as ErrorEnvelope;
  expect(body).toEqual({
    type: "error",
    error: { type, message: expect.any(String) },
    request_id: expect.stringMatching(/^req_011C/),
  });
  expect(response.headers.get("request-id")).toBe(body.request_id);
  return body;
}

const fault = (spec: string) => ({ "x-sandbox-fault": spec });
const weatherTool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("POST /anthropic/v1/messages", () => {
  it("answers the real message shape, ignoring ?beta=true", async () => {
    const response = await postMessages(
      sandbox.url,
      messagesBody("Hello there friend", { system: "You are terse." }),
      { path: "/anthropic/v1/messages?beta=true" },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("request-id")).toMatch(/^req_011C[A-Za-z0-9]{20}$/);
    const body = (await response.json()) as Message;
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_01[A-Za-z0-9]{22}$/),
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [
        { type: "text", text: expect.stringMatching(/^Sandbox reply to Hello there friend: /) },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 6,
        output_tokens: 24,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    expect(wordCount(String(body.content[0]?.text))).toBe(24);
  });

  it("accepts a bearer token instead of x-api-key", async () => {
    const response = await postMessages(sandbox.url, messagesBody("hi"), {
      headers: { "x-api-key": "", authorization: "Bearer sk-ant-oat-token" },
    });
    expect(response.status).toBe(200);
  });

  it("rejects missing credentials, a missing anthropic-version and invalid bodies", async () => {
    const noKey = await postMessages(sandbox.url, messagesBody("hi"), {
      headers: { "x-api-key": "" },
    });
    expect((await failure(noKey, 401, "authentication_error")).error.message).toBe(
      "x-api-key header is required",
    );
    const noVersion = await postMessages(sandbox.url, messagesBody("hi"), {
      headers: { "anthropic-version": "" },
    });
    expect((await failure(noVersion, 400, "invalid_request_error")).error.message).toBe(
      "anthropic-version: header is required",
    );
    const noMax = await postMessages(sandbox.url, {
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect((await failure(noMax, 400, "invalid_request_error")).error.message).toBe(
      "max_tokens: Field required",
    );
    await failure(await postMessages(sandbox.url, "{not json"), 400, "invalid_request_error");
    const badFault = await postMessages(sandbox.url, messagesBody("hi"), {
      headers: fault("explode=1"),
    });
    expect((await failure(badFault, 400, "invalid_request_error")).error.message).toMatch(
      /unknown sandbox fault 'explode'/,
    );
  });

  it("answers unknown paths under /anthropic with not_found_error", async () => {
    await failure(
      await postMessages(sandbox.url, {}, { path: "/anthropic/v1/nope" }),
      404,
      "not_found_error",
    );
  });

  it("calls a tool after a user turn and answers from tool results", async () => {
    const call = await message(messagesBody("Weather in Paris?", { tools: [weatherTool] }));
    expect(call.stop_reason).toBe("tool_use");
    const [block] = call.content;
    expect(block).toEqual({
      type: "tool_use",
      id: expect.stringMatching(/^toolu_01[0-9a-f]{22}$/),
      name: "get_weather",
      input: { city: expect.stringMatching(/^[a-z]+/) },
    });
    const answer = await message({
      model: "claude-haiku-4-5",
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: call.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: block?.id, content: "Sunny, 21 degrees" }],
        },
      ],
    });
    expect(answer.stop_reason).toBe("end_turn");
    expect(answer.content[0]?.text).toMatch(/^Sandbox reply using tool result: Sunny, 21 degrees /);
  });

  it("counts images, caps at max_tokens, honours stop sequences and thinking", async () => {
    const image = await message({
      ...messagesBody(""),
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Describe" },
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
            },
          ],
        },
      ],
    });
    expect(image.content[0]?.text).toMatch(/^Sandbox reply to Describe: I saw 1 image\. /);
    const capped = await message(messagesBody("Say a lot", { max_tokens: 5 }));
    expect(capped.stop_reason).toBe("max_tokens");
    expect(capped.usage?.output_tokens).toBe(5);
    const stopped = await message(messagesBody("Say a lot", { stop_sequences: ["a lot"] }));
    expect(stopped).toMatchObject({
      stop_reason: "stop_sequence",
      stop_sequence: "a lot",
      content: [{ type: "text", text: "Sandbox reply to Say " }],
    });
    const thinking = await message(
      messagesBody("Think first", {
        max_tokens: 4096,
        thinking: { type: "enabled", budget_tokens: 2048 },
      }),
    );
    expect(thinking.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(thinking.content[0]).toEqual({
      type: "thinking",
      thinking: expect.stringMatching(/^Sandbox thinking about the request: /),
      signature: expect.any(String),
    });
    expect(thinking.usage?.output_tokens).toBe(12 + 24);
  });
});

describe("faults", () => {
  it.each([
    [400, "invalid_request_error"],
    [401, "authentication_error"],
    [403, "permission_error"],
    [404, "not_found_error"],
    [413, "request_too_large"],
    [500, "api_error"],
    [503, "api_error"],
    [529, "overloaded_error"],
  ])("status=%i answers Anthropic's %s envelope", async (status, type) => {
    const response = await postMessages(
      sandbox.url,
      messagesBody(`fail [[sandbox:status=${status}]]`),
    );
    await failure(response, status, type);
  });

  it("sends retry-after with 429 and fails only fail-times requests", async () => {
    const limited = await postMessages(sandbox.url, messagesBody("hi"), {
      headers: fault("status=429;retry-after=2"),
    });
    await failure(limited, 429, "rate_limit_error");
    expect(limited.headers.get("retry-after")).toBe("2");
    const spec = { headers: { ...fault("fail-times=1;status=529"), "x-sandbox-fault-key": "k1" } };
    expect((await postMessages(sandbox.url, messagesBody("hi"), spec)).status).toBe(529);
    expect((await postMessages(sandbox.url, messagesBody("hi"), spec)).status).toBe(200);
  });

  it("reports cache tokens apart from input_tokens, and no-usage leaves usage out", async () => {
    const cached = await message(
      messagesBody("one two three four five six"),
      fault("cached-tokens=4;cache-write-tokens=1"),
    );
    expect(cached.usage).toEqual({
      input_tokens: 1,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 1,
      output_tokens: 24,
    });
    const bare = await message(messagesBody("hi"), fault("no-usage;words=3"));
    expect(bare.usage).toBeUndefined();
    expect(bare.content[0]?.text).toBe("Sandbox reply to");
  });

  it("delays the answer, and hangs until the client leaves", async () => {
    const started = Date.now();
    await message(messagesBody("hi"), fault("delay=120"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    const hung = postMessages(sandbox.url, messagesBody("hi"), {
      headers: fault("hang"),
      signal: AbortSignal.timeout(100),
    });
    await expect(hung).rejects.toThrow();
    await waitFor(() => sandbox.stats().aborted === 1);
  });

  it("drops a non-stream request without an answer", async () => {
    await expect(
      postMessages(sandbox.url, messagesBody("hi"), { headers: fault("drop=0") }),
    ).rejects.toThrow();
    await waitFor(() => sandbox.stats().dropped === 1);
  });
});

describe("POST /anthropic/v1/messages/count_tokens", () => {
  it("returns the prompt count messages report as input", async () => {
    const body = {
      model: "claude-haiku-4-5",
      system: "Be brief.",
      messages: [{ role: "user", content: "one two three" }],
    };
    const response = await postMessages(sandbox.url, body, {
      path: "/anthropic/v1/messages/count_tokens?beta=true",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("request-id")).toMatch(/^req_/);
    expect(await response.json()).toEqual({ input_tokens: 5 });
    const full = await message({ ...body, max_tokens: 10 });
    expect(full.usage?.input_tokens).toBe(5);
  });
});
