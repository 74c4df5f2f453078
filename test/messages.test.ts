import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const ROUTES = [
  { name: "native Anthropic route", model: "claude-haiku-4-5" },
  { name: "translated OpenAI-compatible route", model: "gpt-4o-mini" },
  // The output cap must go out as max_completion_tokens, which the sandbox insists on as OpenAI does.
  { name: "translated OpenAI reasoning-model route", model: "gpt-5-mini" },
  { name: "translated Gemini route", model: "gemini-2.5-flash" },
];

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  gateway = await startTestGateway();
  client = new Anthropic({ baseURL: gateway.url, apiKey: gateway.adminKey, maxRetries: 0 });
});
afterAll(() => gateway.close());

/** The event names and block types of a stream, to compare structure across routes. */
async function structure(stream: AsyncIterable<Anthropic.RawMessageStreamEvent>) {
  const events: string[] = [];
  let text = "";
  let json = "";
  let firstJsonFragment: string | undefined;
  for await (const event of stream) {
    if (event.type === "content_block_start")
      events.push(`${event.type}:${event.content_block.type}`);
    else if (event.type === "content_block_delta") {
      if (events.at(-1) !== `${event.type}:${event.delta.type}`)
        events.push(`${event.type}:${event.delta.type}`);
      if (event.delta.type === "text_delta") text += event.delta.text;
      if (event.delta.type === "input_json_delta") {
        firstJsonFragment ??= event.delta.partial_json;
        json += event.delta.partial_json;
      }
    } else events.push(event.type);
  }
  return { events, text, json, firstJsonFragment };
}

describe.each(ROUTES)("/v1/messages over the $name", ({ model }) => {
  it("answers without streaming", async () => {
    const message = await client.messages.create({
      model,
      max_tokens: 200,
      messages: [{ role: "user", content: "Messages text case" }],
    });
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.model).toBe(model);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content[0]).toMatchObject({
      type: "text",
      text: expect.stringMatching(/^Sandbox reply to Messages text case/),
    });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("streams the exact event sequence", async () => {
    const stream = await client.messages.create({
      model,
      max_tokens: 200,
      stream: true,
      messages: [{ role: "user", content: "Messages stream case" }],
    });
    const { events, text } = await structure(stream);
    expect(events.filter((event) => event !== "ping")).toEqual([
      "message_start",
      "content_block_start:text",
      "content_block_delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toMatch(/^Sandbox reply to Messages stream case/);
  });

  it("round-trips a tool use, streamed and not", async () => {
    const first = await client.messages.create({
      model,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [{ role: "user", content: "Weather in Oslo?" }],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((block) => block.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("expected a tool_use block");
    expect(use.name).toBe("get_weather");
    expect(typeof (use.input as { city: unknown }).city).toBe("string");
    const streamed = await structure(
      await client.messages.create({
        model,
        max_tokens: 300,
        stream: true,
        tools: [WEATHER],
        messages: [{ role: "user", content: "Weather in Oslo?" }],
      }),
    );
    expect(streamed.events.filter((event) => event !== "ping")).toEqual([
      "message_start",
      "content_block_start:tool_use",
      "content_block_delta:input_json_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(streamed.firstJsonFragment).toBe("");
    expect(JSON.parse(streamed.json)).toEqual(use.input);
    const second = await client.messages.create({
      model,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: use.id, content: "Snow, -3 degrees" }],
        },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]).toMatchObject({
      type: "text",
      text: expect.stringContaining("Snow, -3 degrees"),
    });
  });

  it("accepts a thinking request and an image block", async () => {
    const message = await client.messages.create({
      model,
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
            { type: "text", text: "What is in the picture?" },
          ],
        },
      ],
    });
    const text = message.content.find((block) => block.type === "text");
    expect(text?.type === "text" && text.text).toMatch(/1 image/);
    expect(message.stop_reason).toBe("end_turn");
  });
});

describe("what Claude Code sends", () => {
  const claudeCodeBody = (model: string) => ({
    model,
    max_tokens: 32000,
    stream: true,
    system: [
      { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=cli;" },
      { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "List the files", cache_control: { type: "ephemeral" } }],
      },
      { role: "system", content: "The user is in /tmp" },
      { role: "user", content: "Now please answer" },
    ],
    tools: [WEATHER, { type: "web_search_20250305", name: "web_search", max_uses: 3 }],
    thinking: { type: "adaptive" },
    output_config: { effort: "high" },
    context_management: { edits: [] },
    metadata: { user_id: JSON.stringify({ device_id: "abc", session_id: "s1" }) },
  });

  for (const { name, model } of ROUTES.slice(0, 2)) {
    it(`streams a Claude Code request over the ${name}`, async () => {
      const auths: Record<string, string>[] = [
        { authorization: `Bearer ${gateway.adminKey}` },
        { "x-api-key": gateway.adminKey },
      ];
      for (const auth of auths) {
        const response = await fetch(`${gateway.url}/v1/messages?beta=true`, {
          method: "POST",
          headers: {
            ...auth,
            "content-type": "application/json",
            "anthropic-version": "2023-06-01",
            "anthropic-beta":
              "claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14",
            "x-app": "cli",
            "anthropic-dangerous-direct-browser-access": "true",
          },
          body: JSON.stringify(claudeCodeBody(model)),
        });
        expect(response.status, await response.clone().text()).toBe(200);
        expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
        const text = await response.text();
        expect(text, text.slice(0, 300)).toMatch(/^event: message_start/);
        expect(text).toContain("event: ping");
        expect(text).toContain("event: message_stop");
      }
    });

    it(`counts tokens for the ${name}`, async () => {
      const { stream: _stream, max_tokens: _max, ...body } = claudeCodeBody(model);
      const response = await fetch(`${gateway.url}/v1/messages/count_tokens?beta=true`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${gateway.adminKey}`,
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
        },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const { input_tokens } = (await response.json()) as { input_tokens: number };
      expect(input_tokens).toBeGreaterThan(20);
    });
  }

  it("forwards anthropic-version and anthropic-beta unchanged to an Anthropic upstream", async () => {
    await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": gateway.adminKey,
        "content-type": "application/json",
        "anthropic-version": "2026-10-21",
        "anthropic-beta": "beta-one,beta-two",
      },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        max_tokens: 50,
        messages: [{ role: "user", content: "headers check" }],
      }),
    });
    const log = (await (
      await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=5`)
    ).json()) as {
      requests: Array<{
        path: string;
        headers: Record<string, string>;
        body: { messages?: Array<{ content: unknown }> };
      }>;
    };
    const upstream = log.requests.filter((entry) => entry.path === "/anthropic/v1/messages").at(-1);
    expect(upstream?.headers["anthropic-version"]).toBe("2026-10-21");
    expect(upstream?.headers["anthropic-beta"]).toBe("beta-one,beta-two");
  });
});

describe("errors, mapping and billing in the Anthropic dialect", () => {
  it("answers a bad key with an authentication_error", async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": "sk-wrong",
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
      }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      type: "error",
      error: {
        type: "authentication_error",
        message: expect.any(String),
        details: { error_code: "invalid_api_key" },
      },
      request_id: response.headers.get("x-request-id"),
    });
  });

  it("answers 402 and 429 in the Anthropic dialect", async () => {
    const poor = await createUser(gateway, { balanceMicros: 1 });
    const refused = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": poor.key,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "x" }],
      }),
    });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe(
      "billing_error",
    );
    const limited = await createUser(gateway, { keyOptions: { rpm: 1 } });
    const send = () =>
      fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: {
          "x-api-key": limited.key,
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
        },
        body: JSON.stringify({
          model: "claude-haiku-4-5",
          max_tokens: 100,
          messages: [{ role: "user", content: "x" }],
        }),
      });
    expect((await send()).status).toBe(200);
    const throttled = await send();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await throttled.json()) as { error: { type: string } }).error.type).toBe(
      "rate_limit_error",
    );
  });

  it("maps a coding assistant's model names through key aliases and prefix patterns", async () => {
    const user = await createUser(gateway, {
      keyOptions: {
        model_aliases: { "claude-*": "gpt-4o-mini", "claude-opus-4-8": "claude-haiku-4-5" },
      },
    });
    const ask = async (model: string) => {
      const local = new Anthropic({ baseURL: gateway.url, apiKey: user.key, maxRetries: 0 });
      const response = await local.messages
        .create({ model, max_tokens: 50, messages: [{ role: "user", content: "alias" }] })
        .withResponse();
      return response.response.headers.get("x-request-id");
    };
    await ask("claude-sonnet-5");
    await ask("claude-opus-4-8");
    const usage = (await (
      await gateway.request("/v1/account/usage", { key: user.key })
    ).json()) as { data: Array<{ model: string }> };
    expect(usage.data.map((row) => row.model).sort()).toEqual(["claude-haiku-4-5", "gpt-4o-mini"]);
  });

  it("bills prompt-cache reads and writes of a native route at their own prices", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const local = new Anthropic({ baseURL: gateway.url, apiKey: user.key, maxRetries: 0 });
    const response = await local.messages
      .create({
        model: "claude-haiku-4-5",
        max_tokens: 50,
        messages: [
          {
            role: "user",
            content:
              "[[sandbox:cached-tokens=4;cache-write-tokens=2]] one two three four five six seven eight",
          },
        ],
      })
      .withResponse();
    const { usage } = response.data;
    expect(usage.cache_read_input_tokens).toBe(4);
    expect(usage.cache_creation_input_tokens).toBe(2);
    const records = (await (
      await gateway.request("/v1/account/usage", { key: user.key })
    ).json()) as {
      data: Array<{
        cached_input_tokens: number;
        cache_write_tokens: number;
        input_tokens: number;
        cost_micros: number;
        breakdown: Record<string, number>;
      }>;
    };
    const record = records.data[0];
    expect(record).toMatchObject({
      cached_input_tokens: 4,
      cache_write_tokens: 2,
      input_tokens: usage.input_tokens + 6,
    });
    expect(Object.keys(record?.breakdown ?? {}).sort()).toEqual([
      "cache_write",
      "cached_input",
      "input",
      "output",
    ]);
    expect(Number(response.response.headers.get("x-switchyard-cost-micros"))).toBe(
      record?.cost_micros,
    );
  });
});
