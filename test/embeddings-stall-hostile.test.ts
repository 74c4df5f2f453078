/**
 * One large but legal embeddings request (2,000+ inputs of ~3.8 KB of ordinary words,
 * under the 10 MB body limit) must not hold the gateway's event loop, whatever the vendor does.
 * The bar is the project's own (test/body-limit-hostile.test.ts, test/tokenizer-stall.test.ts):
 * under 1 s. The vendor is a fake in this process answering at once, so the stall measured is
 * the gateway's own work.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { longestStall } from "./support/loop-stall.ts";

let gateway: TestGateway;
let vendor: FakeVendor;
let geminiVendor: FakeVendor;
let key: string;

const pricing = { per_1m_tokens: { input: 10_000, output: 0 } };

beforeAll(async () => {
  vendor = await startFakeVendor();
  geminiVendor = await startFakeVendor();
  gateway = await startTestGateway({
    env: { OWN_VENDOR_KEY: "own-key" },
    config: {
      catalog: {
        models: [
          {
            id: "own-voyage-embed",
            endpoint: "embedding",
            family: "own-voyage-embed",
            display_name: "Own Voyage embedding",
            owned_by: "self-hosted",
            capabilities: { dimensions: [256], default_dimensions: 256 },
            pricing,
            routes: [
              {
                vendor: "voyage",
                adapter: "voyage",
                base_url: vendor.url,
                upstream_model: "voyage-4",
                credential_env: "OWN_VENDOR_KEY",
              },
            ],
          },
          {
            id: "own-gemini-embed",
            endpoint: "embedding",
            family: "own-gemini-embed",
            display_name: "Own Gemini embedding",
            owned_by: "self-hosted",
            capabilities: { dimensions: [4], default_dimensions: 4 },
            pricing,
            routes: [
              {
                vendor: "gemini",
                adapter: "gemini",
                base_url: geminiVendor.url,
                upstream_model: "gemini-embedding-001",
                credential_env: "OWN_VENDOR_KEY",
              },
            ],
          },
        ],
      },
    },
  });
  key = (await createUser(gateway, { balanceMicros: 100_000_000 })).key;
  // Warm the tokenizer and the route.
  geminiVendor.answer({ body: { embeddings: [{ values: [0.5, 0.5, 0.5, 0.5] }] } });
  const warm = await gateway.request("/v1/embeddings", {
    key,
    json: { model: "own-gemini-embed", input: "warm up" },
  });
  expect(warm.status, await warm.text()).toBe(200);
}, 60_000);
afterAll(async () => {
  await gateway?.close();
  await vendor?.close();
  await geminiVendor?.close();
});

/** ~3.8 KB of short distinct words (ordinary text for the tokenizer: no long runs). */
const text = (seed: number) =>
  Array.from({ length: 650 }, (_, i) => `w${(i * 31 + seed) % 997}x`).join(" ");

describe("embeddings: the gateway's token counts of a large batch", () => {
  it("splitting 2,048 inputs for a Voyage route (token cap per call) does not block the event loop", async () => {
    // The batch is split by tokens per call, so every input is counted before any upstream call.
    // Each count of a text under 4,096 chars is synchronous after an already-resolved await:
    // counted one after another without a turn of the event loop in between, 2,048 of them held
    // the loop for seconds, and every other request of the gateway waited.
    const input = Array.from({ length: 2048 }, (_, i) => text(i));
    for (let i = 0; i < 40; i++) vendor.answer({ status: 400, body: { detail: "rejected" } });
    const { stallMs, result } = await longestStall(async () => {
      const response = await gateway.request("/v1/embeddings", {
        key,
        json: { model: "own-voyage-embed", input },
      });
      return { status: response.status, text: (await response.text()).slice(0, 300) };
    });
    expect(result.status, result.text).toBe(400); // the vendor's rejection, passed on
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms by one embeddings request of ${input.length} inputs`,
    ).toBeLessThan(1_000);
  }, 120_000);

  it("settling 2,000 inputs on a Gemini route (no usage reported) does not block the event loop", async () => {
    // Gemini reports no usage, so the settlement counts each input of a part itself: without a
    // turn of the event loop between texts the whole batch is counted in one turn.
    const input = Array.from({ length: 2000 }, (_, i) => text(i));
    const part = {
      embeddings: Array.from({ length: 100 }, () => ({ values: [0.5, 0.5, 0.5, 0.5] })),
    };
    for (let i = 0; i < 20; i++) geminiVendor.answer({ body: part });
    const { stallMs, result } = await longestStall(async () => {
      const response = await gateway.request("/v1/embeddings", {
        key,
        json: { model: "own-gemini-embed", input },
      });
      return { status: response.status, text: (await response.text()).slice(0, 300) };
    });
    expect(result.status, result.text).toBe(200);
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms by one embeddings request of ${input.length} inputs`,
    ).toBeLessThan(1_000);
  }, 120_000);
});
