/**
 * What a client learns of the gateway's upstreams from an error. A route to a
 * self-hosted server on the operator's network (a private address and port) that refuses the
 * connection must answer 502 upstream_error without telling the client where that server is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({
    env: { OWN_INTERNAL_KEY: "sk-internal-secret" },
    config: {
      catalog: {
        models: [
          {
            id: "own-internal-embed",
            endpoint: "embedding",
            family: "own-internal-embed",
            display_name: "Self-hosted embedding",
            owned_by: "self-hosted",
            capabilities: { dimensions: [4], default_dimensions: 4 },
            pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
            routes: [
              {
                vendor: "internal-tei",
                adapter: "openai-compatible",
                // Nothing listens on port 1: the connection is refused.
                base_url: "http://127.0.0.1:1/internal/v1",
                upstream_model: "bge-m3",
                credential_env: "OWN_INTERNAL_KEY",
              },
            ],
          },
        ],
      },
    },
  });
});
afterAll(() => gateway?.close());

describe("upstream errors do not reveal where the upstream is", () => {
  it("a refused connection to a self-hosted route does not put its address and port in the client's error", async () => {
    // undici's message for a refused connection is `connect ECONNREFUSED <ip>:<port>` (for a
    // DNS failure, `getaddrinfo ENOTFOUND <host>`). Passed on as the `detail` of
    // upstream_error, it would tell any client the private address of the operator's server.
    const response = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "own-internal-embed", input: "hello" },
    });
    const error = await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_error",
    });
    expect(error.message).not.toMatch(/127\.0\.0\.1|:1\b|ECONNREFUSED/);
  });
});
