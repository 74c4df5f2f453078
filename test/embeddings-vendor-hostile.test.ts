/**
 * /v1/embeddings on a Gemini route whose vendor misbehaves (test/support/fake-vendor.ts).
 * Each test states the behaviour the docs promise (docs/embeddings.md, docs/errors.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";

let gateway: TestGateway;
let vendor: FakeVendor;

beforeAll(async () => {
  vendor = await startFakeVendor();
  gateway = await startTestGateway({
    env: { OWN_GEMINI_KEY: "own-gemini-key" },
    config: {
      catalog: {
        models: [
          {
            id: "own-gemini-embed",
            endpoint: "embedding",
            family: "own-gemini-embed",
            display_name: "Own Gemini embedding",
            owned_by: "self-hosted",
            capabilities: { dimensions: [4, 8], default_dimensions: 4 },
            pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
            routes: [
              {
                vendor: "gemini",
                adapter: "gemini",
                base_url: vendor.url,
                upstream_model: "gemini-embedding-001",
                credential_env: "OWN_GEMINI_KEY",
              },
            ],
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

describe("embeddings on Gemini, a vendor that answers oddly", () => {
  it("fails uncharged when a Gemini vector holds a number JSON.parse reads as Infinity", async () => {
    // `1e400` is valid JSON and parses to Infinity. A reader that only checks `typeof v ===
    // "number"` lets it through; the normalization then divides by an infinite norm, and the
    // client would receive NaN (`null` in JSON floats) as a paid, successful embedding.
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    vendor.answer({
      headers: { "content-type": "application/json" },
      body: '{"embeddings":[{"values":[1e400,0.5,0.5,0.5]}]}',
    });
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "own-gemini-embed", input: "hello there", encoding_format: "float" },
    });
    const text = await response.text();
    expect({ status: response.status, balance: await balanceOf(gateway, user.key) }, text).toEqual({
      status: 502,
      balance: 1_000_000,
    });
  });

  it("answers an invalid vendor credential (Google's 400 API_KEY_INVALID) as 502 upstream_error, not as the client's 400", async () => {
    // Google answers a bad or revoked API key with HTTP 400 INVALID_ARGUMENT (reason
    // API_KEY_INVALID), not 401. docs/errors.md: the gateway's credential for the vendor being
    // wrong "is not the client's fault" and answers 502 upstream_error. Passed on as a 400
    // invalid_request_error "API key not valid. Please pass a valid API key." it would blame the
    // client's (valid) gateway key, and the route's circuit breaker would not count it.
    vendor.answer({
      status: 400,
      body: {
        error: {
          code: 400,
          message: "API key not valid. Please pass a valid API key.",
          status: "INVALID_ARGUMENT",
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "API_KEY_INVALID",
              domain: "googleapis.com",
              metadata: { service: "generativelanguage.googleapis.com" },
            },
          ],
        },
      },
    });
    const response = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "own-gemini-embed", input: "hello there" },
    });
    await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_error",
    });
  });
});
