/**
 * Usage accounting and pricing accuracy against vendors that report usage in their own
 * conventions (or oddly) and clients that want cheaper service. Each test states the correct
 * behaviour and failed before its fix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";

/** 1 µUSD per input token, 2 per output token, 0.1 per cached token, 1.25 per cache write. */
const CHAT_PRICES = {
  input: 1_000_000,
  output: 2_000_000,
  cached_input: 100_000,
  cache_write: 1_250_000,
};

function chatModel(id: string, adapter: string, baseUrl: string) {
  return {
    id,
    endpoint: "chat",
    family: "usage",
    display_name: id,
    owned_by: "switchyard",
    capabilities: { max_output_tokens: 4_000, streaming: true, reasoning: true, tools: true },
    pricing: { per_1m_tokens: CHAT_PRICES },
    routes: [{ vendor: `usage-${id}`, adapter, base_url: baseUrl, upstream_model: `${id}-up` }],
  };
}

/** An OpenAI chat completion answering `text` with the given usage object. */
function openAIAnswer(text: string, usage: unknown) {
  return {
    body: {
      id: "chatcmpl-usage",
      object: "chat.completion",
      created: 1,
      model: "usage-up",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage,
    },
  };
}

describe("usage, hostile: vendor reports and pricing", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            chatModel("rv-oai", "openai-compatible", `${vendor.url}/v1`),
            chatModel("rv-claude", "anthropic", vendor.url),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await vendor.close();
  });

  async function chat(model: string, content: string, extra: Record<string, unknown> = {}) {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model, messages: [{ role: "user", content }], ...extra },
    });
    const body = (await response.json()) as {
      usage?: Record<string, unknown> & { cost_micros?: number };
    };
    const charged = before - (await balanceOf(gateway, user.key));
    const row = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    return { status: response.status, body, charged, row };
  }

  // Attack (vendor convention): xAI's Grok reasoning models report `reasoning_tokens` *beside*
  // `completion_tokens` (total_tokens = prompt + completion + reasoning) and bill them at the
  // completion price. The OpenAI-compatible adapter assumes OpenAI's convention (reasoning
  // inside completion_tokens) and `priceTokens` clamps reasoning to output.total, so 1,000
  // reasoning tokens the vendor bills are charged as 10: every grok-4 call is mostly free.
  it("charges reasoning tokens a vendor reports outside completion_tokens (xAI convention)", async () => {
    vendor.answer(
      openAIAnswer("ok", {
        prompt_tokens: 10,
        completion_tokens: 10,
        total_tokens: 1_020,
        completion_tokens_details: { reasoning_tokens: 1_000 },
      }),
    );
    const { status, charged, row } = await chat("rv-oai", "think hard");
    expect(status).toBe(200);
    // 10 input × 1 + (10 answer + 1,000 reasoning) × 2 = 2,030 µUSD.
    expect({ charged, output: row?.output_tokens }).toEqual({ charged: 2_030, output: 1_010 });
  });

  // Attack (odd vendor): a usage object with `completion_tokens: null` (or `prompt_tokens`
  // missing) passes the adapter's "has a number" check, and the missing side becomes 0. The
  // answer's text is delivered and never billed (and the prompt likewise), although the
  // gateway can count both itself, as it does when the usage object is absent altogether.
  it("bills a side the vendor's usage leaves null or missing by the gateway's own count", async () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
    vendor.answer(openAIAnswer(words, { prompt_tokens: 5, completion_tokens: null }));
    const noOutput = await chat("rv-oai", "say many words");
    vendor.answer(openAIAnswer("ok", { completion_tokens: 1 }));
    const noInput = await chat("rv-oai", words);
    expect(noOutput.status).toBe(200);
    expect(noInput.status).toBe(200);
    expect({
      deliveredOutputBilled: (noOutput.row?.output_tokens ?? 0) >= 200,
      promptBilled: (noInput.row?.input_tokens ?? 0) >= 200,
    }).toEqual({ deliveredOutputBilled: true, promptBilled: true });
  });

  // Attack (odd vendor): cache counts are taken as they come. `cached_tokens` larger than
  // `prompt_tokens` (or negative) is priced as is: 1,000,000 "cached" tokens for a 100-token
  // prompt, or a negative cache count that inflates the fresh input, drain the whole hold.
  // Each prompt token must be priced once: cache counts belong in [0, prompt_tokens].
  it("never prices more prompt tokens than the vendor reported (cache counts clamped to the total)", async () => {
    vendor.answer(
      openAIAnswer("ok", {
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 1_000_000 },
      }),
    );
    const tooMany = await chat("rv-oai", "hello");
    vendor.answer(
      openAIAnswer("ok", {
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: -1_000_000 },
      }),
    );
    const negative = await chat("rv-oai", "hello");
    // At most all 100 prompt tokens at the full input price plus 1 output token: 102 µUSD.
    expect(
      { tooMany: tooMany.charged <= 102, negative: negative.charged <= 102 },
      `charged ${tooMany.charged} and ${negative.charged} µUSD for a 100-token prompt`,
    ).toEqual({ tooMany: true, negative: true });
  });

  // Attack (odd vendor): a count sent as a string ("20") was accepted half-way: priced (coerced
  // by `-`), but the client's `total_tokens` was built with `+`, so the client read
  // `total_tokens: "1020"`. A count that is not a non-negative integer is no count: the usage
  // report is then treated as absent and both sides are counted by the gateway, in integers
  // that agree with the charge.
  it("shows the client integer usage that agrees with the charge when a vendor sends a count as a string", async () => {
    vendor.answer(openAIAnswer("ok", { prompt_tokens: 10, completion_tokens: "20" }));
    const { status, body, charged, row } = await chat("rv-oai", "hello");
    expect(status).toBe(200);
    const usage = body.usage ?? {};
    const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
    expect([prompt, completion, total].every(Number.isSafeInteger)).toBe(true);
    expect(total).toBe(Number(prompt) + Number(completion));
    expect(usage.cost_micros).toBe(charged);
    expect(charged).toBe(Number(prompt) + 2 * Number(completion));
    expect(row?.usage_source).toBe("estimated");
  });

  // Attack (client): Anthropic bills 1-hour cache writes (`cache_control: {type: "ephemeral",
  // ttl: "1h"}`, reported under `usage.cache_creation.ephemeral_1h_input_tokens`) at 2× the
  // input price, 5-minute writes at 1.25×. The gateway forwards the client's `ttl` untouched
  // but prices every write at the catalog's `cache_write` (the 5-minute price), so a client
  // gets hour-long caching at the 5-minute price and the operator pays the difference.
  it("prices Anthropic 1-hour cache writes at the 1-hour rate (2× input), not the 5-minute rate", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const prompt = "lorem ipsum dolor sit amet ".repeat(2_000); // ~54,000 characters
    vendor.answer({
      body: {
        id: "msg_usage",
        type: "message",
        role: "assistant",
        model: "rv-claude-up",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 10_000,
          cache_read_input_tokens: 0,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 10_000 },
          output_tokens: 10,
        },
      },
    });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/messages", {
      key: user.key,
      json: {
        model: "rv-claude",
        max_tokens: 100,
        system: [{ type: "text", text: prompt, cache_control: { type: "ephemeral", ttl: "1h" } }],
        messages: [{ role: "user", content: "hi" }],
      },
    });
    expect(response.status).toBe(200);
    await response.text();
    const charged = before - (await balanceOf(gateway, user.key));
    // 10 input × 1 + 10,000 1-hour writes × 2 + 10 output × 2 = 20,030 µUSD.
    expect(charged).toBe(20_030);
  });
});
