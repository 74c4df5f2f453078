/**
 * The streaming passthrough paths (OpenAI chat on an OpenAI-compatible route, Anthropic
 * /v1/messages on an Anthropic route) against a vendor that writes valid but unusual streams:
 * output in shapes the delivered count did not read (content parts, legacy function calls,
 * content in `content_block_start`), a chunk of an odd shape that made the count throw, spaced
 * or duplicated members, a choice index far out, a `message_delta` without usage. Each of these
 * made delivered output free, broke a complete answer or leaked the vendor's names before it was
 * fixed; each test states the expected behaviour. A scripted vendor picks its behaviour from a
 * `mode:<name>` marker in the last user message.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "../src/billing/index.ts";
import { passThroughChunks } from "../src/providers/openai-compatible/openai-chunk-passthrough.ts";
import type { ChatChunkStreamPart } from "../src/spec/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
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
const TEXT = WORDS.map((w) => `${w} `).join("");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const MODES: Record<string, StreamScript> = {
  // Mistral Magistral streams its thinking (and text) as `delta.content` arrays of parts.
  "content-array": async (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    for (const word of WORDS) {
      response.write(
        oaChunk(body.model, [
          {
            index: 0,
            delta: {
              content: [{ type: "thinking", thinking: [{ type: "text", text: `${word} ` }] }],
            },
            finish_reason: null,
          },
        ]),
      );
      await sleep(2);
    }
    setTimeout(() => response.socket?.destroy(), 30);
  },
  // The same Magistral-style stream, slowly (for a client that aborts part-way).
  "content-array-slow": async (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    for (const word of WORDS) {
      if (response.destroyed) return;
      response.write(
        oaChunk(body.model, [
          {
            index: 0,
            delta: { content: [{ type: "text", text: `${word} ` }] },
            finish_reason: null,
          },
        ]),
      );
      await sleep(20);
    }
    response.end();
  },
  // The legacy `functions` dialect: arguments in `delta.function_call.arguments`.
  "function-call": async (body, response) => {
    response.write(
      oaChunk(body.model, [
        {
          index: 0,
          delta: { role: "assistant", content: null, function_call: { name: "f", arguments: "" } },
          finish_reason: null,
        },
      ]),
    );
    for (const word of WORDS)
      response.write(
        oaChunk(body.model, [
          { index: 0, delta: { function_call: { arguments: `${word} ` } }, finish_reason: null },
        ]),
      );
    setTimeout(() => response.socket?.destroy(), 30);
  },
  // 300 words of content, then one chunk whose `tool_calls` is not an array, an honest finish
  // and no usage (a vendor that ignores stream_options).
  "odd-tool-calls": (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    for (const word of WORDS)
      response.write(
        oaChunk(body.model, [{ index: 0, delta: { content: `${word} ` }, finish_reason: null }]),
      );
    response.write(
      oaChunk(body.model, [{ index: 0, delta: { tool_calls: {} }, finish_reason: null }]),
    );
    response.write(oaChunk(body.model, [{ index: 0, delta: {}, finish_reason: "stop" }]));
    response.end("data: [DONE]\n\n");
  },
  // A complete, well-formed answer whose finish chunk has a space before the colon of
  // `"finish_reason" :` (valid JSON whitespace).
  "spaced-finish": (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    response.write(
      oaChunk(body.model, [{ index: 0, delta: { content: "hello" }, finish_reason: null }]),
    );
    response.write(
      `data: {"id":"chatcmpl-VENDORID","object":"chat.completion.chunk","created":1,"model":"${body.model}","choices":[{"index":0,"delta":{},"finish_reason" :"stop"}]}\n\n`,
    );
    response.write(
      `data: {"id":"chatcmpl-VENDORID","object":"chat.completion.chunk","created":1,"model":"${body.model}","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}\n\n`,
    );
    response.end("data: [DONE]\n\n");
  },
  // Chunks with the id and model members written twice (JSON parsers keep the last one).
  "duplicate-members": (body, response) => {
    response.write(
      oaChunk(body.model, [
        { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null },
      ]),
    );
    response.write(
      oaChunk(
        body.model,
        [{ index: 0, delta: { content: "hello" }, finish_reason: null }],
        `,"id":"chatcmpl-VENDORID","model":"${body.model}"`,
      ),
    );
    response.write(oaChunk(body.model, [{ index: 0, delta: {}, finish_reason: "stop" }]));
    response.write(
      oaChunk(
        body.model,
        [],
        `,"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}`,
      ),
    );
    response.end("data: [DONE]\n\n");
  },
  // Anthropic: the whole answer in content_block_start (text), an honest message_delta
  // reporting 400 output tokens, then the connection dies before message_stop.
  "start-text": (body, response) => {
    response.write(messageStart(body.model));
    response.write(
      anthropicEvent("content_block_start", {
        index: 0,
        content_block: { type: "text", text: TEXT },
      }),
    );
    response.write(anthropicEvent("content_block_stop", { index: 0 }));
    response.write(
      anthropicEvent("message_delta", {
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 400 },
      }),
    );
    setTimeout(() => response.socket?.destroy(), 30);
  },
  // Anthropic: a tool_use block whose input comes whole in content_block_start.
  "start-tool": (body, response) => {
    response.write(messageStart(body.model));
    response.write(
      anthropicEvent("content_block_start", {
        index: 0,
        content_block: { type: "tool_use", id: "toolu_1", name: "f", input: { text: TEXT } },
      }),
    );
    response.write(anthropicEvent("content_block_stop", { index: 0 }));
    response.write(
      anthropicEvent("message_delta", {
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 400 },
      }),
    );
    setTimeout(() => response.socket?.destroy(), 30);
  },
  // Anthropic: 300 words, a message_delta without usage, message_stop.
  "delta-no-usage": (body, response) => {
    response.write(messageStart(body.model));
    response.write(anthropicTextBlock(WORDS));
    response.write(
      anthropicEvent("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null } }),
    );
    response.end(anthropicEvent("message_stop", {}));
  },
};

describe("streaming passthrough against unusual vendor streams", () => {
  let gateway: TestGateway;
  let vendor: Server;

  beforeAll(async () => {
    vendor = await startScriptedVendor(MODES);
    const { port } = vendor.address() as AddressInfo;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            scriptedChatModel("rv-openai", "openai-compatible", `http://127.0.0.1:${port}/v1`),
            scriptedChatModel("rv-anthropic", "anthropic", `http://127.0.0.1:${port}`),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => vendor.close(resolve));
  });

  async function chat(mode: string, extra: Record<string, unknown> = {}) {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model: "rv-openai",
        stream: true,
        ...extra,
        messages: [{ role: "user", content: `mode:${mode}` }],
      },
    });
    const text = await response.text().catch(() => "");
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    return { text, record };
  }

  async function messages(mode: string) {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const response = await gateway.request("/v1/messages", {
      key: user.key,
      headers: { "anthropic-version": "2023-06-01" },
      json: {
        model: "rv-anthropic",
        stream: true,
        max_tokens: 1_000,
        messages: [{ role: "user", content: `mode:${mode}` }],
      },
    });
    const text = await response.text().catch(() => "");
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    return { text, record };
  }

  const delivered300 = () => countTokens(TEXT, { exact: true });

  // Expected: "delivered text counts content, refusals, reasoning and tool-call arguments"
  // (docs/billing.md) whatever shape the vendor writes it in. Content as an array of parts
  // (Mistral Magistral's thinking/text chunks, on a catalog route) and legacy
  // `delta.function_call.arguments` reach the client but are not counted, so a stream the
  // upstream breaks (or the client aborts) after delivering them is billed no output at all —
  // here the request is even recorded `failed` and charged 0.
  it.each(["content-array", "function-call"])(
    "bills output delivered in %s deltas when the upstream breaks mid-stream",
    async (mode) => {
      const { text, record } = await chat(mode);
      expect((text.match(/word\d+/g) ?? []).length).toBe(300);
      expect(record?.status).toBe("interrupted");
      expect(record?.output_tokens).toBeGreaterThanOrEqual(await delivered300());
    },
  );

  // The hostile-client side of the same gap: on a route whose vendor streams content as parts
  // (Magistral on Mistral is in the shipped catalog), a client that reads 100 words and aborts is
  // billed its prompt only, 0 output tokens. Expected: at least the ~100 words it received.
  it("bills an aborted stream for the content-array parts it delivered", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const controller = new AbortController();
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      signal: controller.signal,
      json: {
        model: "rv-openai",
        stream: true,
        messages: [{ role: "user", content: "mode:content-array-slow" }],
      },
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/word\d+/g) ?? []).length < 100) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    const got = [...text.matchAll(/word\d+ /g)].map((m) => m[0]).join("");
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThanOrEqual(await countTokens(got, { exact: true }));
  });

  // Expected: a completed stream whose vendor reports no usage is charged the gateway's own count.
  // One chunk whose `delta.tool_calls` is an object (passed through verbatim on the fast path)
  // makes addDelivered throw a TypeError (`for…of` over a non-iterable); the count throws, the
  // stream dies without [DONE], and the settlement falls back to a release: 300 delivered words,
  // charged nothing. The same throw wipes the bill of an aborted stream and every checkpoint.
  it("charges a completed usage-less stream despite one chunk with a non-array tool_calls", async () => {
    const { text, record } = await chat("odd-tool-calls");
    expect((text.match(/word\d+/g) ?? []).length).toBe(300);
    expect(record?.status).toBe("succeeded");
    expect(record?.cost_micros).toBeGreaterThan(0);
    expect(record?.output_tokens).toBeGreaterThanOrEqual(await delivered300());
  });

  // Expected: `"finish_reason" :"stop"` (a space before the colon) is the same JSON as without
  // it; the stream completes with the gateway's usage chunk and [DONE]. Before the fix, NEEDS_READING
  // only matches `"finish_reason":` with the colon right after the key, so the renamed fast path forwards the finish unread, and the
  // gateway then ends a complete answer with an upstream_error ("ended before it finished"),
  // records it `interrupted` and ignores the vendor's usage.
  it("reads a finish_reason written with a space before the colon", async () => {
    const { text, record } = await chat("spaced-finish", {
      stream_options: { include_usage: true },
    });
    expect(text).toContain("hello");
    expect(text).not.toContain("upstream_error");
    expect(text).toContain("data: [DONE]");
    expect(record?.status).toBe("succeeded");
  });

  // Expected: the client never sees the vendor's completion id or upstream model name (the
  // passthrough rewrites both). renameMembers replaces only the FIRST `"id":…` / `"model":…`
  // occurrence; a chunk repeating a member keeps the vendor's value in the second, and every
  // JSON parser (the openai SDK's included) keeps the last duplicate.
  it("does not leak the vendor's id and model through duplicated members", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key });
    const stream = await client.chat.completions.create({
      model: "rv-openai",
      stream: true,
      messages: [{ role: "user", content: "mode:duplicate-members" }],
    });
    const seen: Array<{ id: string; model: string }> = [];
    for await (const chunk of stream) seen.push({ id: chunk.id, model: chunk.model });
    expect(seen.length).toBeGreaterThan(1);
    for (const chunk of seen) {
      expect(chunk.model).toBe("rv-openai");
      expect(chunk.id).not.toBe("chatcmpl-VENDORID");
    }
  });

  // Expected: what a vendor delivers in content_block_start (a text block's text, a tool_use
  // block's whole input — the shape translating proxies and some Anthropic-compatible vendors
  // send) counts as delivered; and an interrupted stream is charged at least what the vendor
  // itself reported (message_delta: 400 output tokens). Before the fix, addDelta only reads
  // content_block_delta, and streamBilling.usage returns undefined when the gateway's own
  // output count is 0, ignoring the reported usage: status `failed`, charged 0.
  it.each(["start-text", "start-tool"])(
    "bills a /v1/messages stream that delivered its answer in content_block_start (%s) and then broke",
    async (mode) => {
      const { text, record } = await messages(mode);
      expect((text.match(/word\d+/g) ?? []).length).toBe(300);
      expect(record?.status).toBe("interrupted");
      expect(record?.output_tokens).toBeGreaterThanOrEqual(400);
      expect(record?.cost_micros).toBeGreaterThan(0);
    },
  );

  // Expected: message_start's `output_tokens: 1` is Anthropic's placeholder (docs/billing.md
  // says so), not a report of the answer; a message_delta with no usage leaves the output
  // unreported, so the gateway should count it itself ("a report that lacks … the output total
  // is treated as no report"). Before the fix, mergeAnthropicUsage keeps the placeholder and the
  // completed stream settles at upstream.usage(): 300 words billed as 1 output token.
  it("does not bill a completed /v1/messages stream at message_start's placeholder output count", async () => {
    const { text, record } = await messages("delta-no-usage");
    expect((text.match(/word\d+/g) ?? []).length).toBe(300);
    expect(record?.output_tokens).toBeGreaterThanOrEqual(await delivered300());
  });
});

describe("passThroughChunks and a vendor's choice index", () => {
  // Expected: a finish for a choice index far beyond `n` is ignored (or refused), not used to
  // size an array. finishReasons[choice.index] = reason makes a sparse array of length index+1,
  // and Array.from(finishReasons, …) then materializes it: index 10,000,000 allocates a
  // 10-million-element array per stream; index 4,294,967,294 (one chunk) would try 2^32 entries
  // and take the gateway process down (OOM) or stall its event loop.
  it("does not materialize an array sized by the vendor's choice index", async () => {
    const data = [
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}',
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":10000000,"delta":{},"finish_reason":"stop"},{"index":0,"delta":{},"finish_reason":"stop"}]}',
    ];
    async function* reads() {
      yield data.map((item) => ({ data: item }));
    }
    let finish: ChatChunkStreamPart | undefined;
    for await (const part of passThroughChunks(
      reads(),
      { id: "x", model: "y", usageNulls: false },
      1,
    ))
      if (part.type === "finish") finish = part;
    const reasons = (finish as { finishReasons?: unknown[] } | undefined)?.finishReasons ?? [];
    expect(reasons.length).toBeLessThanOrEqual(1);
  });
});
