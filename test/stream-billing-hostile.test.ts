/**
 * Streamed chat and messages billing against a client that aborts and vendors that misbehave:
 * - an aborted (or usage-less) chat stream is billed its whole prompt as the gateway counts it —
 *   tool definitions and images included, and at least the input an Anthropic upstream reported
 *   in `message_start` — not only the messages' text;
 * - reasoning streamed as `delta.reasoning` (Groq's dialect) counts as delivered, and what the
 *   gateway counts itself as reasoning is priced at the reasoning price;
 * - a native /v1/messages upstream's events after `message_stop` are not passed on.
 * A completed stream is billed what its upstream reported (docs/billing.md).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "../src/billing/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";

const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const WORDS = Array.from({ length: 300 }, (_, i) => `word${i}`);

/** A system message of sandbox directives, then `text` and 20 images from the user. */
const imagePrompt = (directives: string, text = "describe") => [
  { role: "system", content: `[[sandbox:${directives}]]` },
  {
    role: "user",
    content: [
      { type: "text", text },
      ...Array.from({ length: 20 }, () => ({ type: "image_url", image_url: { url: PIXEL } })),
    ],
  },
];

/**
 * A vendor whose behaviour is picked by a `mode:<name>` marker in the last user message:
 * - on /v1/messages (Anthropic), always: 20 words, an honest usage report, `message_stop`, then
 *   100 more words;
 * - `groq-reasoning-drop`: streams 300 words of reasoning in `delta.reasoning` (Groq's dialect
 *   for gpt-oss), then cuts the connection;
 * - `groq-reasoning`: the same reasoning, then a normal end with no usage at all.
 */
function startRogueVendor(): Promise<Server> {
  const server = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => {
      raw += chunk.toString();
    });
    request.on("end", () => {
      const body = JSON.parse(raw) as {
        model: string;
        messages: Array<{ content: unknown }>;
      };
      const mode = /mode:([a-z-]+)/.exec(JSON.stringify(body.messages))?.[1];
      if (request.url?.endsWith("/v1/messages")) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const event = (name: string, data: object) =>
          `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
        response.write(
          event("message_start", {
            message: {
              id: "msg_rogue",
              type: "message",
              role: "assistant",
              model: body.model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 5, output_tokens: 1 },
            },
          }),
        );
        response.write(
          event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        );
        for (const word of WORDS.slice(0, 20))
          response.write(
            event("content_block_delta", {
              index: 0,
              delta: { type: "text_delta", text: `${word} ` },
            }),
          );
        // An honest (even generous) report for the 20 words sent before message_stop.
        response.write(
          event("message_delta", {
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 100 },
          }),
        );
        response.write(event("message_stop", {}));
        for (const word of WORDS.slice(0, 100))
          response.write(
            event("content_block_delta", {
              index: 0,
              delta: { type: "text_delta", text: `extra${word} ` },
            }),
          );
        response.end();
        return;
      }
      const base = {
        id: "chatcmpl-rogue",
        object: "chat.completion.chunk",
        created: 1,
        model: body.model,
      };
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ role: "assistant", content: "" }, null));
      for (const word of WORDS) response.write(chunk({ reasoning: `${word} ` }, null));
      if (mode === "groq-reasoning-drop") {
        // Cut the connection after the reasoning went out.
        setTimeout(() => response.socket?.destroy(), 50);
        return;
      }
      response.write(chunk({ content: "ok" }, null));
      response.write(chunk({}, "stop"));
      response.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("streamed billing against hostile clients and vendors", () => {
  let gateway: TestGateway;
  let rogue: Server;

  beforeAll(async () => {
    rogue = await startRogueVendor();
    const { port } = rogue.address() as AddressInfo;
    const model = (id: string, adapter: string, base: string) => ({
      id,
      endpoint: "chat",
      family: "test",
      display_name: id,
      owned_by: "switchyard",
      capabilities: { max_output_tokens: 1_000, streaming: true, reasoning: true },
      pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
      routes: [{ vendor: `rogue-${id}`, adapter, base_url: base, upstream_model: `${id}-up` }],
    });
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            model("rogue-openai", "openai-compatible", `http://127.0.0.1:${port}/v1`),
            model("rogue-anthropic", "anthropic", `http://127.0.0.1:${port}`),
            {
              ...model("rogue-thinker", "openai-compatible", `http://127.0.0.1:${port}/v1`),
              pricing: {
                per_1m_tokens: { input: 1_000_000, output: 2_000_000, reasoning: 20_000_000 },
              },
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => rogue.close(resolve));
  });

  const usageOf = (key: string, requestId: string) => usageRowOf(gateway, key, requestId);

  /** Streams a chat of `model` in the rogue vendor's `mode`; the text read and the record. */
  async function rogueStream(model: string, mode: string, extra: Record<string, unknown> = {}) {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model,
        stream: true,
        ...extra,
        messages: [{ role: "user", content: `mode:${mode}` }],
      },
    });
    const text = await response.text();
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    return { text, delivered: (text.match(/word\d+/g) ?? []).length, record };
  }

  /** Streams a request and aborts after `afterContent` content/reasoning chunks; the text read. */
  async function streamAndAbort(
    key: string,
    path: string,
    json: unknown,
    afterContent: number,
  ): Promise<{ requestId: string; text: string }> {
    const controller = new AbortController();
    const response = await gateway.request(path, { key, json, signal: controller.signal });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id") ?? "";
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let seen = 0;
    try {
      while (seen < afterContent) {
        const { value, done } = await reader.read();
        if (done) break;
        const piece = decoder.decode(value, { stream: true });
        text += piece;
        seen = (text.match(/"(content|text|reasoning_content)":"[^"]+"/g) ?? []).length;
      }
    } finally {
      controller.abort();
      await reader.cancel().catch(() => {});
    }
    return { requestId, text };
  }

  it("bills the tool definitions and images of an aborted chat stream's prompt", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    // A prompt whose bulk is tool definitions (about 6,000 tokens) and 20 images.
    const description = Array.from({ length: 1_500 }, (_, i) => `alpha${i}`).join(" ");
    const tools = [
      {
        type: "function",
        function: {
          name: "lookup",
          description,
          parameters: { type: "object", properties: { q: { type: "string" } } },
        },
      },
    ];
    const toolTokens = await countTokens(JSON.stringify(tools), { exact: true });
    expect(toolTokens).toBeGreaterThan(3_000);
    const { requestId } = await streamAndAbort(
      user.key,
      "/v1/chat/completions",
      {
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 2_000,
        tools,
        tool_choice: "none",
        messages: imagePrompt("words=1000;chunk-delay=5", "hello"),
      },
      3,
    );
    const record = await usageOf(user.key, requestId);
    expect(record?.status).toBe("aborted");
    // The sandbox itself counts 85 prompt tokens per image (1,700 for 20); the tool definitions
    // are thousands more. The gateway's own count of this prompt must cover them.
    expect(record?.input_tokens).toBeGreaterThanOrEqual(toolTokens + 20 * 85);
  });

  it("bills the images of a completed chat stream whose upstream reports no usage", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const messages = (fault: string) => imagePrompt(`words=10${fault}`);
    const withUsage = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model: "gpt-4o-mini",
        stream: true,
        stream_options: { include_usage: true },
        messages: messages(""),
      },
    });
    const reported = await withUsage.text();
    const usageChunk = reported
      .split("\n\n")
      .map((frame) => frame.replace(/^data: /, ""))
      .filter((data) => data.includes('"usage":{'))
      .map((data) => JSON.parse(data) as { usage: { prompt_tokens: number } })[0];
    const noUsage = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "gpt-4o-mini", stream: true, messages: messages(";no-usage") },
    });
    await noUsage.text();
    const record = await usageOf(user.key, noUsage.headers.get("x-request-id") ?? "");
    expect(usageChunk?.usage.prompt_tokens).toBeGreaterThan(1_700);
    expect(record?.usage_source).toBe("estimated");
    // The same prompt, the upstream silent on usage: the 20 images are not billed at all.
    expect(record?.input_tokens).toBeGreaterThanOrEqual(1_700);
  });

  it("bills the reasoning (delta.reasoning) a pass-through stream delivered before the upstream broke", async () => {
    const { text, delivered, record } = await rogueStream("rogue-openai", "groq-reasoning-drop");
    expect(delivered).toBe(300);
    expect(text).toContain("upstream_error");
    expect(record?.status).not.toBe("failed");
    expect(record?.cost_micros).toBeGreaterThan(0);
    expect(record?.output_tokens).toBeGreaterThanOrEqual(300);
  });

  it("prices the reasoning it counted itself at the reasoning price", async () => {
    const { record } = await rogueStream("rogue-thinker", "groq-reasoning-drop", {
      max_tokens: 1_000,
    });
    // Only reasoning was delivered before the break: every output token is a reasoning one, at
    // 20 micro-USD (the output price is 2).
    expect(record?.reasoning_tokens).toBeGreaterThanOrEqual(300);
    expect(record?.reasoning_tokens).toBe(record?.output_tokens);
    expect(record?.cost_micros).toBeGreaterThanOrEqual((record?.reasoning_tokens ?? 0) * 20);
    expect(record?.cost_micros).toBeLessThanOrEqual(record?.held_micros ?? 0);
  });

  it("bills the reasoning (delta.reasoning) of a completed pass-through stream without usage", async () => {
    const { delivered, record } = await rogueStream("rogue-openai", "groq-reasoning");
    expect(delivered).toBe(300);
    expect(record?.output_tokens).toBeGreaterThanOrEqual(300);
  });

  it("passes on nothing a native /v1/messages upstream sends after message_stop", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const response = await gateway.request("/v1/messages", {
      key: user.key,
      headers: { "anthropic-version": "2023-06-01" },
      json: {
        model: "rogue-anthropic",
        stream: true,
        max_tokens: 1_000,
        messages: [{ role: "user", content: "mode:after-stop" }],
      },
    });
    const text = await response.text();
    const before = (text.match(/ word\d+/g) ?? []).length + (text.match(/"word\d+/g) ?? []).length;
    const after = (text.match(/extraword\d+/g) ?? []).length;
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    const delivered = await countTokens(
      [...text.matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join(""),
      { exact: true },
    );
    // The client gets nothing the upstream sent after message_stop (the request is settled).
    expect(after).toBe(0);
    expect(before).toBeGreaterThan(0);
    expect(record?.cost_micros).toBeLessThanOrEqual(record?.held_micros ?? 0);
    expect(record?.output_tokens).toBeGreaterThanOrEqual(delivered);
  });

  it("bills the input an Anthropic upstream reported in message_start when an OpenAI-client stream is aborted", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const { requestId } = await streamAndAbort(
      user.key,
      "/v1/chat/completions",
      {
        model: "claude-haiku-4-5",
        stream: true,
        max_tokens: 2_000,
        messages: imagePrompt("words=1000;chunk-delay=5"),
      },
      3,
    );
    // What the same prompt reports upstream when it runs to its end.
    const full = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model: "claude-haiku-4-5",
        max_tokens: 2_000,
        messages: imagePrompt("words=10"),
      },
    });
    const reported = ((await full.json()) as { usage: { prompt_tokens: number } }).usage
      .prompt_tokens;
    const record = await usageOf(user.key, requestId);
    expect(record?.status).toBe("aborted");
    expect(reported).toBeGreaterThan(1_700);
    expect(record?.input_tokens).toBeGreaterThanOrEqual(reported);
  });
});
