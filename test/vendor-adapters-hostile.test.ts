/**
 * The Gemini (chat, embeddings), Voyage (embeddings) and DashScope (speech) adapters against a
 * misbehaving vendor, seen through the gateway's public HTTP surface: usage reports that would
 * make delivered output free, answers with nothing in them, values no header or client can
 * carry, vectors whose length overflows, audio that decodes to nothing. Each test asserts the
 * behaviour the docs promise (docs/billing.md, docs/embeddings.md, docs/speech.md,
 * docs/errors.md).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";
import { dashScopeSpeechModel } from "./support/vendor-models.ts";

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let gateway: TestGateway;
let server: Server;
let vendorUrl: string;
let handler: Handler = (_q, _b, r) => {
  r.writeHead(500);
  r.end("no handler");
};

/** 1 µUSD per input token, 2 per output token. */
const CHAT_PRICES = { input: 1_000_000, output: 2_000_000 };

function geminiChatModel(id: string, baseUrl: string) {
  return {
    id,
    endpoint: "chat",
    family: "review",
    display_name: id,
    owned_by: "self-hosted",
    capabilities: { max_output_tokens: 8_000, streaming: true, reasoning: true, tools: true },
    pricing: { per_1m_tokens: CHAT_PRICES },
    routes: [
      { vendor: "rogue-gemini", adapter: "gemini", base_url: baseUrl, upstream_model: "g-up" },
    ],
  };
}

function embeddingModel(id: string, adapter: string, baseUrl: string, upstreamModel: string) {
  return {
    id,
    endpoint: "embedding",
    family: id,
    display_name: id,
    owned_by: "self-hosted",
    capabilities: { dimensions: [4], default_dimensions: 4 },
    pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
    routes: [
      { vendor: `rogue-${adapter}`, adapter, base_url: baseUrl, upstream_model: upstreamModel },
    ],
  };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => handler(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  vendorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gateway = await startTestGateway({
    config: {
      catalog: {
        models: [
          geminiChatModel("rv-gemini", vendorUrl),
          embeddingModel("rv-gemini-embed", "gemini", vendorUrl, "gemini-embedding-001"),
          embeddingModel("rv-voyage", "voyage", vendorUrl, "voyage-4"),
          dashScopeSpeechModel("rv-tts", vendorUrl, 100_000),
        ],
      },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** Waits until the account holds nothing (a stream's settlement can follow its last byte). */
async function waitForNoHold(key: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const response = await gateway.request("/v1/account/balance", { key });
    const body = (await response.json()) as { held_micros: number };
    if (body.held_micros === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function json(response: ServerResponse, body: unknown, status = 200) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** `count` distinct words: about one o200k token each. */
const words = (count: number) =>
  Array.from({ length: count }, (_, i) => `word${i % 50} alpha`).join(" ");

describe("Gemini chat, a vendor that misbehaves", () => {
  async function chat(extra: Record<string, unknown> = {}) {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "rv-gemini", messages: [{ role: "user", content: "say things" }], ...extra },
    });
    const text = await response.text();
    await waitForNoHold(user.key);
    const charged = before - (await balanceOf(gateway, user.key));
    const requestId = response.headers.get("x-request-id") ?? "";
    return { status: response.status, text, charged, user, requestId };
  }

  it("Gemini usage without candidatesTokenCount (only thoughtsTokenCount) does not bill a long delivered answer as 1 output token", async () => {
    // docs/billing.md: "A report that lacks either the input or the output total is treated as
    // no report". convertGeminiUsage fills a missing candidatesTokenCount with 0 and adds the
    // thoughts; a report of 1 thought token then is "output > 0" and trusted as is, so ~1,000
    // tokens of delivered answer text are billed as 1.
    const answer = words(500);
    handler = (_q, _b, r) =>
      json(r, {
        candidates: [
          { content: { role: "model", parts: [{ text: answer }] }, finishReason: "STOP" },
        ],
        usageMetadata: { promptTokenCount: 5, thoughtsTokenCount: 1, totalTokenCount: 6 },
      });
    const result = await chat();
    expect(result.status, result.text).toBe(200);
    const row = await usageRowOf(gateway, result.user.key, result.requestId);
    expect(row?.output_tokens ?? 0).toBeGreaterThanOrEqual(500);
  });

  it("a Gemini 200 with no candidate, no finishReason and no blockReason is a 502 charged nothing, not an empty billed 200", async () => {
    // The stream reader fails an answer that never says it finished ("Upstream stream ended
    // before it finished"); the JSON reader delivers the same non-answer as a 200 with
    // content null and finish_reason "stop", and charges it.
    handler = (_q, _b, r) => json(r, { usageMetadata: { promptTokenCount: 5 } });
    const result = await chat();
    expect({ status: result.status, charged: result.charged }, result.text).toEqual({
      status: 502,
      charged: 0,
    });
  });

  it("a Gemini functionCall whose name is not a string is not passed on as a tool call with a non-string name", async () => {
    // readGeminiResponse takes `functionCall.name ?? ""`: a number (or an object) reaches the
    // client as `tool_calls[].function.name`, which OpenAI's contract types as a string.
    handler = (_q, _b, r) =>
      json(r, {
        candidates: [
          {
            content: { role: "model", parts: [{ functionCall: { name: 42, args: {} } }] },
            finishReason: "STOP",
          },
        ],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3 },
      });
    const result = await chat({
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
    });
    if (result.status === 200) {
      const body = JSON.parse(result.text) as {
        choices: { message: { tool_calls?: { function: { name: unknown } }[] } }[];
      };
      const names = (body.choices[0]?.message.tool_calls ?? []).map((call) => call.function.name);
      expect(
        names.every((name) => typeof name === "string" && name !== ""),
        result.text,
      ).toBe(true);
    } else {
      expect({ status: result.status, charged: result.charged }).toEqual({
        status: 502,
        charged: 0,
      });
    }
  });

  it("a Gemini stream cut after delivering text (no finishReason) bills the text it delivered", async () => {
    const chunk = (text: string) =>
      `data: ${JSON.stringify({
        candidates: [{ content: { role: "model", parts: [{ text }] } }],
        responseId: "r1",
      })}\n\n`;
    handler = (_q, _b, r) => {
      r.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 20; i++) r.write(chunk(`${words(25)} `));
      r.end();
    };
    const result = await chat({ stream: true });
    expect(result.status).toBe(200);
    const row = await usageRowOf(gateway, result.user.key, result.requestId);
    expect(row?.output_tokens ?? 0).toBeGreaterThanOrEqual(500);
    expect(result.charged).toBeGreaterThanOrEqual(2 * 500);
  });

  it("Gemini usage far beyond the hold is charged at most the hold and leaves the balance >= 0", async () => {
    handler = (_q, _b, r) =>
      json(r, {
        candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP" }],
        usageMetadata: { promptTokenCount: 9_000_000_000_000, candidatesTokenCount: 9_000_000 },
      });
    const user = await createUser(gateway, { balanceMicros: 50_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "rv-gemini", messages: [{ role: "user", content: "hi" }], max_tokens: 100 },
    });
    await response.text();
    await waitForNoHold(user.key);
    const row = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    const balance = await balanceOf(gateway, user.key);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(row?.cost_micros ?? 0).toBeLessThanOrEqual(row?.held_micros ?? 0);
  });
});

describe("embeddings, a vendor that misbehaves", () => {
  it("Gemini: a vector of large finite values is normalized to unit length, not delivered as zeros", async () => {
    // normalizeVector squares the values: 1e200² overflows to Infinity, the norm is Infinity,
    // and every component becomes 0 — a zero vector delivered and billed as an embedding.
    handler = (_q, _b, r) => json(r, '{"embeddings":[{"values":[1e200,1e200,1e200,1e200]}]}');
    const response = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "rv-gemini-embed", input: "hello there", encoding_format: "float" },
    });
    const text = await response.text();
    if (response.status === 200) {
      const vector = (JSON.parse(text) as { data: { embedding: number[] }[] }).data[0]?.embedding;
      const norm = Math.sqrt((vector ?? []).reduce((sum, v) => sum + v * v, 0));
      expect(norm, text).toBeCloseTo(1, 5);
    } else {
      expect(response.status, text).toBe(502);
    }
  });

  it("Voyage: an answer whose `model` holds characters no header may carry is answered, not a charged 500 with Fastify's body", async () => {
    // `model` from the vendor's body becomes the `x-switchyard-upstream-model` header as is.
    handler = (_q, _b, r) =>
      json(r, {
        object: "list",
        data: [{ object: "embedding", index: 0, embedding: [0.5, 0.5, 0.5, 0.5] }],
        model: "voyage-4\u4e2d\u6587",
        usage: { total_tokens: 3 },
      });
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "rv-voyage", input: "hello there" },
    });
    const text = await response.text();
    await waitForNoHold(user.key);
    const charged = 1_000_000 - (await balanceOf(gateway, user.key));
    // Either answered (and charged) or failed (and not charged) — never a 500, and never a
    // failure that was charged.
    expect({ status: response.status, charged: charged > 0 }, text).toEqual({
      status: 200,
      charged: true,
    });
  });

  it("Voyage: usage.total_tokens 0 for a non-empty input does not make the delivered vectors free", async () => {
    // docs/billing.md: a report of no usage for an answer that has some is not taken as one
    // (chat); for embeddings the vendor's 0 is summed as is and the request is charged 0.
    handler = (_q, _b, r) =>
      json(r, {
        object: "list",
        data: [{ object: "embedding", index: 0, embedding: [0.5, 0.5, 0.5, 0.5] }],
        model: "voyage-4",
        usage: { total_tokens: 0 },
      });
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "rv-voyage", input: words(200) },
    });
    const text = await response.text();
    await waitForNoHold(user.key);
    const charged = 1_000_000 - (await balanceOf(gateway, user.key));
    expect(response.status, text).toBe(200);
    expect(charged).toBeGreaterThan(0);
  });
});

describe("DashScope speech, a vendor that misbehaves", () => {
  async function speak(format: "wav" | "mp3" = "wav") {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    let status = 0;
    let completed = true;
    let text = "";
    try {
      const response = await gateway.request("/v1/audio/speech", {
        key: user.key,
        json: { model: "rv-tts", input: "hello there", voice: "Cherry", response_format: format },
      });
      status = response.status;
      const bytes = Buffer.from(await response.arrayBuffer());
      text = bytes.subarray(0, 300).toString("latin1");
    } catch (error) {
      completed = false;
      text = String((error as Error).cause ?? error);
    }
    await waitForNoHold(user.key);
    const charged = before - (await balanceOf(gateway, user.key));
    return { status, completed, text, charged };
  }

  it("an SSE stream whose only audio is base64 of zero bytes ('====') is a 502 charged nothing, not a connection closed without a status", async () => {
    // runSpeech refuses a success without a byte of audio by checking that the first chunk
    // exists; an empty chunk passes that check, the WAV header goes out with a 200, and then
    // the adapter fails ("finished without any audio") and the connection is cut.
    handler = (_q, _b, r) => {
      r.writeHead(200, { "content-type": "text/event-stream" });
      r.write(
        `id:1\nevent:result\ndata:${JSON.stringify({
          request_id: "r-empty",
          output: { finish_reason: "stop", audio: { data: "====", id: "a1" } },
          usage: { characters: 11 },
        })}\n\n`,
      );
      r.end();
    };
    const result = await speak("wav");
    expect(
      { status: result.status, completed: result.completed, charged: result.charged },
      result.text,
    ).toEqual({ status: 502, completed: true, charged: 0 });
  });

  it("a JSON answer whose inline audio `data` is a number is a 502 upstream_error charged nothing, not a 500", async () => {
    handler = (_q, _b, r) =>
      json(r, {
        request_id: "r-num",
        output: { finish_reason: "stop", audio: { data: 12345 } },
        usage: { characters: 11 },
      });
    const result = await speak("wav");
    expect({ status: result.status, charged: result.charged }, result.text).toEqual({
      status: 502,
      charged: 0,
    });
  });
});
