/**
 * The streaming passthrough paths against hostile clients and vendors: what must keep holding
 * (an abort with several choices and every delta kind counted, usage far above the hold, escaped
 * member names, an Anthropic abort and a stream without message_stop).
 * A scripted vendor picks its behaviour from a `mode:<name>` marker in the last user message.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "../src/billing/index.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import {
  anthropicEvent,
  anthropicTextBlock,
  messageStart,
  oaChunk,
  type StreamScript,
  scriptedChatModel,
  startScriptedVendor,
} from "./support/scripted-stream-vendor.ts";
import { usageRowOf } from "./support/usage-rows.ts";

const WORDS = Array.from({ length: 300 }, (_, i) => `word${i}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const MODES: Record<string, StreamScript> = {
  // Every counted field, two choices, slowly: reasoning_content, refusal, tool-call arguments.
  "mixed-slow": async (body, response) => {
    for (const [i, word] of WORDS.entries()) {
      if (response.destroyed) return;
      const delta =
        i % 3 === 0
          ? { reasoning_content: `${word} ` }
          : i % 3 === 1
            ? { refusal: `${word} ` }
            : { tool_calls: [{ index: 0, function: { arguments: `${word} ` } }] };
      response.write(
        oaChunk(body.model, [
          { index: 0, delta, finish_reason: null },
          { index: 1, delta: { content: `${word} ` }, finish_reason: null },
        ]),
      );
      await sleep(15);
    }
    response.end();
  },
  // Usage far above any hold: 10^9 output tokens.
  "over-report": (body, response) => {
    response.write(
      oaChunk(body.model, [{ index: 0, delta: { content: "hi" }, finish_reason: null }]),
    );
    response.write(oaChunk(body.model, [{ index: 0, delta: {}, finish_reason: "stop" }]));
    response.write(
      oaChunk(
        body.model,
        [],
        ',"usage":{"prompt_tokens":10,"completion_tokens":1000000000,"total_tokens":1000000010}',
      ),
    );
    response.end("data: [DONE]\n\n");
  },
  // The id and model keys written with unicode escapes: slow path, rebuilt.
  "escaped-keys": (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    response.write(
      `data: {"\\u0069d":"chatcmpl-VENDORID","object":"chat.completion.chunk","created":1,"\\u006dodel":"${body.model}","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}\n\n`,
    );
    response.write(oaChunk(body.model, [{ index: 0, delta: {}, finish_reason: "stop" }]));
    response.end("data: [DONE]\n\n");
  },
  // Anthropic, slowly: thinking_delta, signature_delta, text_delta, input_json_delta.
  "anthropic-mixed-slow": async (body, response) => {
    response.write(messageStart(body.model));
    response.write(
      anthropicEvent("content_block_start", {
        index: 0,
        content_block: { type: "thinking", thinking: "" },
      }),
    );
    for (const word of WORDS.slice(0, 100)) {
      response.write(
        anthropicEvent("content_block_delta", {
          index: 0,
          delta: { type: "thinking_delta", thinking: `${word} ` },
        }),
      );
      await sleep(5);
    }
    response.write(
      anthropicEvent("content_block_delta", {
        index: 0,
        delta: { type: "signature_delta", signature: "c2ln" },
      }),
    );
    response.write(anthropicEvent("content_block_stop", { index: 0 }));
    response.write(
      anthropicEvent("content_block_start", {
        index: 1,
        content_block: { type: "tool_use", id: "t", name: "f", input: {} },
      }),
    );
    for (const word of WORDS.slice(100)) {
      if (response.destroyed) return;
      response.write(
        anthropicEvent("content_block_delta", {
          index: 1,
          delta: { type: "input_json_delta", partial_json: `${word} ` },
        }),
      );
      await sleep(15);
    }
    response.end();
  },
  // Anthropic: 300 text words, a message_delta, and the body ends with no message_stop.
  "anthropic-no-stop": (body, response) => {
    response.write(messageStart(body.model));
    response.write(anthropicTextBlock(WORDS));
    response.write(
      anthropicEvent("message_delta", {
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 3 },
      }),
    );
    response.end();
  },
};

describe("streaming passthrough: hostile clients and vendors", () => {
  let gateway: TestGateway;
  let vendor: Server;

  beforeAll(async () => {
    vendor = await startScriptedVendor(MODES);
    const { port } = vendor.address() as AddressInfo;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            scriptedChatModel("rv-openai", "openai-compatible", `http://127.0.0.1:${port}/v1`, {
              max_choices: 2,
            }),
            scriptedChatModel("rv-anthropic", "anthropic", `http://127.0.0.1:${port}`, {
              max_choices: 2,
            }),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => vendor.close(resolve));
  });

  /** Reads a stream until `words` words arrived, aborts; the text read and the record. */
  async function readAndAbort(path: string, json: unknown, words: number, headers = {}) {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const controller = new AbortController();
    const response = await gateway.request(path, {
      key: user.key,
      json,
      headers,
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/word\d+/g) ?? []).length < words) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    return { text, record };
  }

  const wordsIn = (text: string) => [...text.matchAll(/word\d+ /g)].map((m) => m[0]).join("");

  it("bills an aborted OpenAI passthrough for reasoning, refusal, tool arguments and a second choice", async () => {
    const { text, record } = await readAndAbort(
      "/v1/chat/completions",
      {
        model: "rv-openai",
        stream: true,
        n: 2,
        messages: [{ role: "user", content: "mode:mixed-slow" }],
      },
      120,
    );
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThanOrEqual(
      await countTokens(wordsIn(text), { exact: true }),
    );
  });

  it("charges usage reported beyond the hold at the hold, and the balance stays >= 0", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000 });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key });
    const stream = await client.chat.completions.create({
      model: "rv-openai",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "mode:over-report" }],
    });
    let last: { usage?: unknown } | undefined;
    for await (const chunk of stream) last = chunk;
    expect(last?.usage).toBeTruthy();
    const balance = await balanceOf(gateway, user.key);
    expect(balance).toBeGreaterThanOrEqual(0);
    const rows = (await (
      await gateway.request("/v1/account/usage?limit=10", { key: user.key })
    ).json()) as {
      data: Array<{ cost_micros: number; held_micros: number; overrun_micros: number }>;
    };
    const row = rows.data[0]!;
    expect(row.cost_micros).toBeLessThanOrEqual(row.held_micros);
    expect(row.overrun_micros).toBeGreaterThan(0);
    expect(balance).toBe(5_000 - row.cost_micros);
  });

  it("rewrites id and model keys written with unicode escapes (slow path)", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key });
    const stream = await client.chat.completions.create({
      model: "rv-openai",
      stream: true,
      messages: [{ role: "user", content: "mode:escaped-keys" }],
    });
    let content = "";
    for await (const chunk of stream) {
      expect(chunk.model).toBe("rv-openai");
      expect(chunk.id).not.toBe("chatcmpl-VENDORID");
      content += chunk.choices[0]?.delta?.content ?? "";
    }
    expect(content).toBe("hello");
  });

  it("bills an aborted /v1/messages stream for thinking_delta and input_json_delta", async () => {
    const { text, record } = await readAndAbort(
      "/v1/messages",
      {
        model: "rv-anthropic",
        stream: true,
        max_tokens: 1_000,
        messages: [{ role: "user", content: "mode:anthropic-mixed-slow" }],
      },
      160,
      { "anthropic-version": "2023-06-01" },
    );
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThanOrEqual(
      await countTokens(wordsIn(text), { exact: true }),
    );
  });

  it("ends a /v1/messages stream without message_stop with an error and bills what it delivered", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const client = new Anthropic({ baseURL: gateway.url, apiKey: user.key });
    let text = "";
    let failed = false;
    try {
      const stream = await client.messages.create({
        model: "rv-anthropic",
        stream: true,
        max_tokens: 1_000,
        messages: [{ role: "user", content: "mode:anthropic-no-stop" }],
      });
      for await (const event of stream)
        if (event.type === "content_block_delta" && event.delta.type === "text_delta")
          text += event.delta.text;
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    const rows = (await (
      await gateway.request("/v1/account/usage?limit=10", { key: user.key })
    ).json()) as {
      data: Array<{ status: string; output_tokens: number }>;
    };
    const row = rows.data[0];
    expect(row?.status).toBe("interrupted");
    expect(row?.output_tokens).toBeGreaterThanOrEqual(await countTokens(text, { exact: true }));
  });
});
