/**
 * /v1/responses and /v1/embeddings against a scriptable vendor that answers oddly
 * (test/support/fake-vendor.ts) and a client that wants free storage. Each test states the
 * correct behaviour and failed before its fix; each comment says the attack and its cost.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";

let gateway: TestGateway;
let vendor: FakeVendor;

const route = (vendorName: string, upstream: string) => ({
  vendor: vendorName,
  adapter: "openai-compatible",
  base_url: vendor.url,
  upstream_model: upstream,
  credential_env: "ODD_VENDOR_KEY",
});

beforeAll(async () => {
  vendor = await startFakeVendor();
  gateway = await startTestGateway({
    env: { ODD_VENDOR_KEY: "sk-odd-vendor" },
    config: {
      catalog: {
        models: [
          {
            id: "odd-embed",
            endpoint: "embedding",
            family: "odd-embed",
            display_name: "Review embedding model",
            owned_by: "self-hosted",
            capabilities: { dimensions: [4, 8], default_dimensions: 8 },
            pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
            routes: [route("dashscope-compatible", "text-embedding-v4")],
          },
          {
            id: "odd-native",
            endpoint: "chat",
            family: "gpt-4o",
            display_name: "Native Responses route",
            owned_by: "self-hosted",
            capabilities: { streaming: true, tools: true, vision: true, max_output_tokens: 1000 },
            pricing: { per_1m_tokens: { input: 1_000_000, output: 1_000_000 } },
            routes: [route("openai", "gpt-4o")],
          },
          {
            id: "odd-chat",
            endpoint: "chat",
            family: "mistral",
            display_name: "Translated route",
            owned_by: "self-hosted",
            capabilities: { streaming: true, tools: true, vision: true, max_output_tokens: 1000 },
            pricing: { per_1m_tokens: { input: 1_000_000, output: 1_000_000 } },
            routes: [route("mistral", "mistral-small")],
          },
        ],
      },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await vendor?.close();
});

const chatAnswer = (text = "ok") => ({
  body: {
    id: "cmpl_1",
    object: "chat.completion",
    created: 1,
    model: "mistral-small",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  },
});

async function embed(key: string, body: Record<string, unknown>) {
  const response = await gateway.request("/v1/embeddings", {
    key,
    json: { model: "odd-embed", input: "hello there", ...body },
  });
  return { status: response.status, body: await response.text() };
}

describe("embeddings, hostile: a vendor that answers oddly", () => {
  it("fails cleanly, uncharged, when the vendor's embedding index is not an integer", async () => {
    // Vendor answers `index: 0.5` for a single input. readEmbeddingList accepts it (only
    // 0 <= index < count is checked), stores the vector at vectors[0.5] and leaves a hole at 0;
    // flatMap skips the hole, so the client gets `data: []` for one input — and pays for it.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    vendor.answer({
      body: {
        data: [{ index: 0.5, embedding: [1, 0, 0, 0, 0, 0, 0, 0] }],
        usage: { prompt_tokens: 3 },
      },
    });
    const result = await embed(user.key, {});
    expect({ status: result.status, balance: await balanceOf(gateway, user.key) }).toEqual({
      status: 502,
      balance: 1_000_000,
    });
  });

  it("fails cleanly, uncharged, when the vendor's vectors are not the size asked for", async () => {
    // The gateway always sends the catalog size (8 here) and the docs promise vectors of that
    // size; a vendor answering 2-component vectors is passed through as a success and billed.
    // A client storing these in an 8-dim vector index gets corrupt data it paid for.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    vendor.answer({
      body: { data: [{ index: 0, embedding: [0.6, 0.8] }], usage: { prompt_tokens: 3 } },
    });
    const result = await embed(user.key, { encoding_format: "float" });
    expect({ status: result.status, balance: await balanceOf(gateway, user.key) }).toEqual({
      status: 502,
      balance: 1_000_000,
    });
  });

  it("fails cleanly, uncharged, when the vendor's base64 vector holds NaN", async () => {
    // A base64 float32 answer can carry NaN/Infinity (JSON cannot). The gateway decodes it
    // without a finiteness check and JSON.stringify turns NaN into `null`: the client receives
    // `[null, 0.1, ...]` (or NaN bytes in base64) as a paid, successful embedding.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const bytes = Buffer.alloc(32);
    for (let i = 0; i < 8; i++) bytes.writeFloatLE(i === 0 ? Number.NaN : 0.25, i * 4);
    vendor.answer({
      body: {
        data: [{ index: 0, embedding: bytes.toString("base64") }],
        usage: { prompt_tokens: 3 },
      },
    });
    const result = await embed(user.key, { encoding_format: "float" });
    expect({ status: result.status, balance: await balanceOf(gateway, user.key) }).toEqual({
      status: 502,
      balance: 1_000_000,
    });
  });
});

describe("responses, hostile: a native (OpenAI Responses) route", () => {
  it("bills the delivered output when the vendor's usage leaves out output_tokens", async () => {
    // The vendor (or a proxy in front of it) answers a usage object without `output_tokens`.
    // convertResponsesUsage takes `output_tokens ?? 0`, so ~600 delivered output tokens are
    // billed as 0; the chat adapters treat such a half report as no report (token-counts.ts)
    // and count the output themselves. Same hole on the native stream's terminal event.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    vendor.answer({
      body: {
        id: "resp_odd_native_1",
        object: "response",
        status: "completed",
        model: "gpt-4o",
        output: [
          {
            id: "msg_1",
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text, annotations: [] }],
          },
        ],
        usage: { input_tokens: 10 },
      },
    });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
    const { data, response } = await client.responses
      .create({ model: "odd-native", input: "hi", store: false })
      .withResponse();
    expect(data.output_text).toBe(text);
    const row = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    expect(row?.output_tokens).toBeGreaterThanOrEqual(300);
  });
});

describe("responses, hostile: stored responses", () => {
  it("does not keep, for free, fields of input items that it neither bills nor sends", async () => {
    // Input items accept any extra property (TypeBox objects are open). On a translated route
    // the field is not sent upstream and not counted in the hold, yet keepResponse stores the
    // item verbatim, and every `previous_response_id` continuation copies it into a new row.
    // A hostile client stores ~10 MB per request for a few micro-dollars, growing its rows
    // quadratically through a chain (no per-account cap, no expiry). OpenAI refuses such a field
    // with 400 unknown_parameter; dropping it before storage would do as well.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const junk = "x".repeat(500_000);
    vendor.answer(chatAnswer());
    const created = await gateway.request("/v1/responses", {
      key: user.key,
      json: { model: "odd-chat", input: [{ role: "user", content: "hi", junk }] },
    });
    if (created.status !== 200) return; // refused: correct
    const { id } = (await created.json()) as { id: string };
    const items = await gateway.request(`/v1/responses/${id}/input_items`, { key: user.key });
    const listed = (await items.json()) as { data: Record<string, unknown>[] };
    await gateway.request(`/v1/responses/${id}`, { key: user.key, method: "DELETE" });
    expect(listed.data.some((item) => "junk" in item)).toBe(false);
  });
});
