import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const pricing = { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } };
const model = (id: string, routes: Record<string, unknown>[]) => ({
  id,
  endpoint: "chat",
  family: "test",
  display_name: id,
  owned_by: "switchyard",
  pricing,
  routes,
});

interface LoggedRequest {
  path: string;
  body: { model?: string } | null;
}

describe("routes, retries and fallbacks", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        catalog: {
          files: [],
          vendors: {},
          models: [
            model("fallback-chat", [
              { vendor: "openai", upstream_model: "first-choice" },
              { vendor: "deepseek", upstream_model: "second-choice" },
            ]),
            model("timeout-chat", [
              { vendor: "openai", upstream_model: "slow-route", first_byte_timeout_ms: 100 },
              { vendor: "deepseek", upstream_model: "patient-route", first_byte_timeout_ms: 1_000 },
            ]),
          ],
        },
      },
    });
  });
  afterAll(() => gateway.close());

  async function upstreamCalls(requestFilter: (entry: LoggedRequest) => boolean) {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    const { requests } = (await response.json()) as { requests: LoggedRequest[] };
    return requests.filter(requestFilter);
  }

  it("moves to the next route after a 503 before the first byte, and bills once", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: {
        model: "fallback-chat",
        messages: [{ role: "user", content: "[[sandbox:status=503;fail-times=1;words=7]] hi" }],
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      model: string;
      usage: { completion_tokens: number; cost_micros: number };
    };
    expect(body.model).toBe("fallback-chat");
    expect(body.usage.completion_tokens).toBe(7);
    const calls = await upstreamCalls((entry) =>
      ["first-choice", "second-choice"].includes(entry.body?.model ?? ""),
    );
    expect(calls.map((entry) => [entry.path, entry.body?.model])).toEqual([
      ["/openai/v1/chat/completions", "first-choice"],
      ["/deepseek/v1/chat/completions", "second-choice"],
    ]);
    const requestId = response.headers.get("x-request-id");
    const usage = (await (
      await gateway.request("/v1/account/usage?model=fallback-chat", { key: gateway.adminKey })
    ).json()) as {
      data: Array<{ request_id: string; cost_micros: number }>;
    };
    expect(usage.data.filter((row) => row.request_id === requestId)).toEqual([
      expect.objectContaining({ cost_micros: body.usage.cost_micros }),
    ]);
    expect(body.usage.cost_micros).toBeGreaterThan(0);
  });

  it("does not fall back on a non-retryable upstream error", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: {
        model: "fallback-chat",
        messages: [{ role: "user", content: "[[sandbox:status=400;words=8]] bad" }],
      },
    });
    expect(response.status).toBe(400);
    const calls = await upstreamCalls((entry) =>
      JSON.stringify(entry.body).includes("status=400;words=8"),
    );
    expect(calls).toHaveLength(1);
  });

  it("applies each route's own first-byte timeout", async () => {
    const started = Date.now();
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: {
        model: "timeout-chat",
        messages: [{ role: "user", content: "[[sandbox:delay=400]] patience" }],
      },
    });
    expect(response.status).toBe(200);
    const elapsed = Date.now() - started;
    // About 100 ms lost on the first route, then 400 ms on the second.
    expect(elapsed).toBeGreaterThanOrEqual(480);
    expect(elapsed).toBeLessThan(2_000);
    const calls = await upstreamCalls((entry) =>
      ["slow-route", "patient-route"].includes(entry.body?.model ?? ""),
    );
    expect(calls.map((entry) => entry.body?.model)).toEqual(["slow-route", "patient-route"]);
  });

  it("answers 504 when every route times out", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: {
        model: "timeout-chat",
        messages: [{ role: "user", content: "[[sandbox:delay=1500]] too slow" }],
      },
    });
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "upstream_timeout",
    );
  }, 15_000);
});
