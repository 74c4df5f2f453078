/**
 * One table of chat cases run against every upstream protocol through the gateway, with the
 * official `openai` package as the client and the sandbox as the upstream. Every protocol's
 * sandbox derives its reply from the same deterministic planner, so the same prompt yields the
 * same text whichever protocol carried it. A skip must say why.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { sandboxStats, waitFor } from "./support/sandbox-stats.ts";

interface ProtocolCase {
  protocol: string;
  model: string;
  /** Case names to skip, each with its reason. */
  skip?: Record<string, string>;
}

const PROTOCOLS: ProtocolCase[] = [
  { protocol: "openai-compatible", model: "gpt-4o-mini" },
  // OpenAI's reasoning models take the cap as max_completion_tokens and only default sampling.
  { protocol: "openai-compatible, reasoning model", model: "gpt-5-mini" },
  { protocol: "anthropic", model: "claude-haiku-4-5" },
  { protocol: "gemini", model: "gemini-2.5-flash" },
];

const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gateway = await startTestGateway();
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.adminKey, maxRetries: 0 });
});
afterAll(() => gateway.close());

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  let text = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta.content ?? "";
    finish = choice.finish_reason ?? finish;
    for (const call of choice.delta.tool_calls ?? []) {
      const entry = calls.get(call.index) ?? { arguments: "" };
      entry.id ??= call.id;
      entry.name ??= call.function?.name;
      entry.arguments += call.function?.arguments ?? "";
      calls.set(call.index, entry);
    }
  }
  return { text, finish, usage, calls: [...calls.values()], chunks };
}

const referenceText = new Map<string, string>();

for (const { protocol, model, skip = {} } of PROTOCOLS) {
  describe(`chat over ${protocol} (${model})`, () => {
    const test = (name: string, body: () => Promise<void>) =>
      skip[name] ? it.skip(`${name} — skipped: ${skip[name]}`, body) : it(name, body);

    test("text", async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "Conformance text case" },
        ],
      });
      const text = completion.choices[0]?.message.content ?? "";
      expect(text).toMatch(/^Sandbox reply to Conformance text case/);
      expect(completion.choices[0]?.finish_reason).toBe("stop");
      expect(completion.model).toBe(model);
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
      // The same prompt gives the same text on every protocol.
      const reference = referenceText.get("text");
      if (reference === undefined) referenceText.set("text", text);
      else expect(text).toBe(reference);
    });

    test("stream", async () => {
      const request = {
        model,
        messages: [{ role: "user" as const, content: "Conformance stream case" }],
      };
      const whole = await client.chat.completions.create(request);
      const streamed = await collect(
        await client.chat.completions.create({
          ...request,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      expect(streamed.text).toBe(whole.choices[0]?.message.content);
      expect(streamed.finish).toBe("stop");
      expect(streamed.chunks).toBeGreaterThan(3);
      expect(streamed.usage?.completion_tokens).toBe(whole.usage?.completion_tokens);
    });

    test("tools round trip", async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: "user", content: "What is the weather in Paris?" },
      ];
      const first = await client.chat.completions.create({
        model,
        messages,
        tools: [WEATHER_TOOL],
      });
      const call = first.choices[0]?.message.tool_calls?.[0];
      expect(first.choices[0]?.finish_reason).toBe("tool_calls");
      expect(call?.type).toBe("function");
      if (call?.type !== "function") throw new Error("expected a function call");
      expect(call.function.name).toBe("get_weather");
      expect(typeof JSON.parse(call.function.arguments).city).toBe("string");
      const second = await client.chat.completions.create({
        model,
        tools: [WEATHER_TOOL],
        messages: [
          ...messages,
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: "Sunny, 21 degrees" },
        ],
      });
      expect(second.choices[0]?.finish_reason).toBe("stop");
      expect(second.choices[0]?.message.content).toContain("Sunny, 21 degrees");
    });

    test("tools in a stream", async () => {
      const request = {
        model,
        tools: [WEATHER_TOOL],
        messages: [{ role: "user" as const, content: "Weather in Rome?" }],
      };
      const whole = await client.chat.completions.create(request);
      const streamed = await collect(
        await client.chat.completions.create({ ...request, stream: true }),
      );
      expect(streamed.finish).toBe("tool_calls");
      expect(streamed.calls).toHaveLength(1);
      const expected = whole.choices[0]?.message.tool_calls?.[0];
      if (expected?.type !== "function") throw new Error("expected a function call");
      expect(streamed.calls[0]?.name).toBe(expected.function.name);
      expect(JSON.parse(streamed.calls[0]?.arguments ?? "")).toEqual(
        JSON.parse(expected.function.arguments),
      );
    });

    test("image input", async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Describe this picture" },
              { type: "image_url", image_url: { url: PIXEL } },
            ],
          },
        ],
      });
      expect(completion.choices[0]?.message.content).toMatch(/1 image/);
    });

    test("json mode", async () => {
      const completion = await client.chat.completions.create({
        model,
        response_format: { type: "json_object" },
        messages: [{ role: "user", content: "Answer in JSON" }],
      });
      const parsed = JSON.parse(completion.choices[0]?.message.content ?? "") as unknown;
      expect(typeof parsed).toBe("object");
    });

    test("sampling settings", async () => {
      // Each vendor has its own rules (Anthropic's newer models: temperature or top_p, not both;
      // OpenAI's reasoning models: neither, and no penalties); the gateway adapts the request.
      const completion = await client.chat.completions.create({
        model,
        temperature: 0.2,
        top_p: 0.9,
        presence_penalty: 0.5,
        messages: [{ role: "user", content: "Conformance sampling case" }],
      });
      expect(completion.choices[0]?.message.content).toMatch(/^Sandbox reply to Conformance/);
    });

    test("output cap", async () => {
      const completion = await client.chat.completions.create({
        model,
        max_tokens: 5,
        messages: [{ role: "user", content: "Say a lot" }],
      });
      expect(completion.choices[0]?.finish_reason).toBe("length");
      expect(completion.usage?.completion_tokens).toBeLessThanOrEqual(5);
    });

    test("upstream errors", async () => {
      const request = (directive: string) =>
        gateway.request("/v1/chat/completions", {
          key: gateway.adminKey,
          json: { model, messages: [{ role: "user", content: `[[sandbox:${directive}]] fail` }] },
        });
      const serverError = await request("status=500");
      expect(serverError.status).toBe(502);
      expect(((await serverError.json()) as { error: { code: string } }).error.code).toBe(
        "upstream_error",
      );
      const rejected = await request("status=400");
      expect(rejected.status).toBe(400);
      expect(
        ((await rejected.json()) as { error: { message: string } }).error.message.length,
      ).toBeGreaterThan(0);
      const limited = await request("status=429;retry-after=7");
      expect(limited.status).toBe(429);
      // The vendor's Retry-After reaches the client, so it backs off as long as asked.
      expect(limited.headers.get("retry-after")).toBe("7");
    });

    test("client abort reaches the upstream", async () => {
      const before = await sandboxStats(gateway.sandboxUrl);
      const controller = new AbortController();
      const response = await gateway.request("/v1/chat/completions", {
        key: gateway.adminKey,
        json: {
          model,
          stream: true,
          messages: [{ role: "user", content: "[[sandbox:chunk-delay=50;words=60]] abort me" }],
        },
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      const after = await waitFor(
        () => sandboxStats(gateway.sandboxUrl),
        (stats) => stats.aborted > before.aborted,
      );
      expect(after.aborted).toBeGreaterThan(before.aborted);
    });
  });
}
