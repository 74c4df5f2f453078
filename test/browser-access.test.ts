/**
 * Browser access and proxies: CORS for the configured origins only (a preflight answered before
 * authentication, the headers a client reads exposed), none by default; and the client's
 * address taken from `X-Forwarded-For` only when the proxy is trusted, so the per-address
 * sign-up limit counts clients, not the load balancer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const ALLOWED = "https://app.example.com";

function preflight(gateway: TestGateway, origin: string) {
  return gateway.request("/v1/chat/completions", {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type",
    },
  });
}

describe("CORS", () => {
  let open: TestGateway;
  let closed: TestGateway;
  beforeAll(async () => {
    open = await startTestGateway({
      config: { server: { port: 0, host: "127.0.0.1", cors_origins: [ALLOWED] } },
    });
    closed = await startTestGateway();
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
  });

  it("answers an allowed origin's preflight without credentials, naming the origin", async () => {
    const response = await preflight(open, ALLOWED);
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain(
      "authorization",
    );
  });

  it("names the origin on real answers and exposes the headers a client reads", async () => {
    const response = await open.request("/v1/chat/completions", {
      key: open.adminKey,
      headers: { origin: ALLOWED },
      json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    const exposed = response.headers.get("access-control-expose-headers") ?? "";
    for (const header of [
      "x-request-id",
      "x-switchyard-cost-micros",
      "retry-after",
      "idempotent-replayed",
    ])
      expect(exposed).toContain(header);
  });

  it("gives another origin no CORS headers, and none at all by default", async () => {
    const other = await preflight(open, "https://evil.example.net");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const byDefault = await preflight(closed, ALLOWED);
    expect(byDefault.headers.get("access-control-allow-origin")).toBeNull();
    const answer = await closed.request("/v1/models", {
      key: closed.adminKey,
      headers: { origin: ALLOWED },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("trusted proxies", () => {
  const register = (gateway: TestGateway, forwardedFor: string) =>
    gateway.request("/v1/account/register", {
      headers: { "x-forwarded-for": forwardedFor },
      json: {
        email: `p-${Math.random().toString(36).slice(2)}@example.com`,
        password: "correct horse battery",
      },
    });
  const limits = {
    auth: { register_attempts_per_hour: 2, register_attempts_per_email_per_hour: 100 },
  };
  let trusting: TestGateway;
  let plain: TestGateway;
  beforeAll(async () => {
    trusting = await startTestGateway({
      config: { ...limits, server: { port: 0, host: "127.0.0.1", trust_proxy: ["127.0.0.1"] } },
    });
    plain = await startTestGateway({ config: limits });
  });
  afterAll(async () => {
    await trusting?.close();
    await plain?.close();
  });

  it("counts each forwarded client on its own behind a trusted proxy", async () => {
    const first = [
      await register(trusting, "203.0.113.1"),
      await register(trusting, "203.0.113.1"),
    ];
    expect(first.map((response) => response.status)).toEqual([201, 201]);
    expect((await register(trusting, "203.0.113.1")).status).toBe(429);
    expect((await register(trusting, "203.0.113.2")).status).toBe(201);
  });

  it("ignores X-Forwarded-For from a proxy it does not trust", async () => {
    expect((await register(plain, "203.0.113.1")).status).toBe(201);
    expect((await register(plain, "203.0.113.2")).status).toBe(201);
    expect((await register(plain, "203.0.113.3")).status).toBe(429);
  });
});
