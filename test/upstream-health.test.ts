/**
 * Upstream health end to end: a route failing again and again (sandbox faults) is skipped for
 * its cooldown while the fallback serves, probed once the cooldown is over (the gateway's clock
 * moved), and closed by a successful probe; a model whose only route is open answers 503 at
 * once; a half-open route lets exactly one of many concurrent requests through; the client's
 * own 4xx never opens a route; the admin API shows and resets breakers; `/metrics` has the
 * circuit gauge and the skipped attempts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { parseExposition } from "./support/prometheus-text.ts";

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

interface RouteRow {
  id: string;
  vendor: string;
  upstream_model: string;
  state: string;
  consecutive_failures: number;
  last_failure: { at: string; kind: string; status: number | null; message: string } | null;
  opened_at: string | null;
  retry_at: string | null;
  probing: boolean;
}

interface ModelRoutes {
  model: string;
  routes: RouteRow[];
}

describe("upstream health: a circuit breaker per route", () => {
  let gateway: TestGateway;
  let offsetMs = 0;
  let faultSerial = 0;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        routing: {
          circuit_breaker: {
            enabled: true,
            failure_threshold: 3,
            cooldown_seconds: 30,
            max_cooldown_seconds: 300,
          },
        },
        catalog: {
          files: [],
          vendors: {},
          models: [
            model("health-chat", [
              { vendor: "openai", upstream_model: "flaky-first" },
              { vendor: "deepseek", upstream_model: "steady-second" },
            ]),
            model("lonely-chat", [{ vendor: "openai", upstream_model: "lonely-route" }]),
            model("probe-chat", [{ vendor: "mistral", upstream_model: "probe-route" }]),
            model("client-error-chat", [{ vendor: "groq", upstream_model: "picky-route" }]),
            model("stream-chat", [{ vendor: "moonshot", upstream_model: "dropping-route" }]),
          ],
        },
      },
    });
    const realNow = gateway.services.now;
    gateway.services.now = () => realNow() + offsetMs;
  });
  afterAll(() => gateway.close());

  /** Moves the gateway's clock forward. */
  const advance = (seconds: number) => {
    offsetMs += seconds * 1000;
  };

  async function upstreamCalls(upstreamModel: string): Promise<number> {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    const { requests } = (await response.json()) as { requests: LoggedRequest[] };
    return requests.filter((entry) => entry.body?.model === upstreamModel).length;
  }

  /** A fault spec no other request shares (so `fail-times` counters start afresh). */
  const fresh = (spec: string) => `[[sandbox:${spec};words=${3 + (faultSerial++ % 900)}]]`;

  const chat = (modelId: string, content: string, key = gateway.adminKey) =>
    gateway.request("/v1/chat/completions", {
      key,
      json: { model: modelId, messages: [{ role: "user", content }] },
    });

  async function routesOf(modelId: string): Promise<RouteRow[]> {
    const response = await gateway.request("/v1/admin/routes?limit=500", { key: gateway.adminKey });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { object: string; data: ModelRoutes[] };
    expect(page.object).toBe("list");
    const entry = page.data.find((row) => row.model === modelId);
    if (!entry) throw new Error(`${modelId} not listed`);
    return entry.routes;
  }

  async function scrape() {
    const response = await gateway.request("/metrics", { key: gateway.adminKey });
    expect(response.status).toBe(200);
    return parseExposition(await response.text());
  }

  it("skips a failing route for its cooldown, then probes it and closes on success", async () => {
    // Each request: the first route fails once (503), the fallback serves.
    for (let i = 0; i < 3; i++) {
      const response = await chat("health-chat", `${fresh("status=503;fail-times=1")} hi`);
      expect(response.status).toBe(200);
    }
    expect(await upstreamCalls("flaky-first")).toBe(3);
    expect(await upstreamCalls("steady-second")).toBe(3);
    const [first, second] = await routesOf("health-chat");
    expect(first).toMatchObject({
      vendor: "openai",
      upstream_model: "flaky-first",
      state: "open",
      consecutive_failures: 3,
      last_failure: { kind: "http", status: 503 },
    });
    expect(Date.parse(first!.retry_at!) - Date.parse(first!.opened_at!)).toBe(30_000);
    expect(second).toMatchObject({ state: "closed", consecutive_failures: 0 });

    // Open: the sandbox sees no more calls to the first route; the fallback serves.
    for (let i = 0; i < 2; i++) expect((await chat("health-chat", "hello")).status).toBe(200);
    expect(await upstreamCalls("flaky-first")).toBe(3);
    expect(await upstreamCalls("steady-second")).toBe(5);
    const exposition = await scrape();
    const gauge = { vendor: "openai", route: first!.id };
    expect(exposition.read("switchyard_upstream_circuit_state", gauge)).toBe(2);
    expect(
      exposition.read("switchyard_upstream_attempts_total", {
        vendor: "openai",
        model: "health-chat",
        outcome: "circuit_open",
      }),
    ).toBe(2);

    // Still open well before the cooldown ends (real time passes too: a margin for slow machines).
    advance(25);
    expect((await chat("health-chat", "hello")).status).toBe(200);
    expect(await upstreamCalls("flaky-first")).toBe(3);

    // Cooldown over: half-open; the next request probes the route, which now answers.
    advance(5);
    expect((await routesOf("health-chat"))[0]?.state).toBe("half_open");
    expect((await scrape()).read("switchyard_upstream_circuit_state", gauge)).toBe(1);
    expect((await chat("health-chat", "hello")).status).toBe(200);
    expect(await upstreamCalls("flaky-first")).toBe(4);
    expect(await upstreamCalls("steady-second")).toBe(6);
    expect((await routesOf("health-chat"))[0]).toMatchObject({
      state: "closed",
      consecutive_failures: 0,
      retry_at: null,
    });
    expect((await scrape()).read("switchyard_upstream_circuit_state", gauge)).toBe(0);
  });

  it("answers 503 upstream_unavailable at once when a model's only route is open", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await chat("lonely-chat", `${fresh("status=500")} hi`);
      expect(response.status).toBe(502);
    }
    expect(await upstreamCalls("lonely-route")).toBe(3);
    const started = performance.now();
    const response = await chat("lonely-chat", "hi");
    const elapsed = performance.now() - started;
    const retryAfter = Number(response.headers.get("retry-after"));
    const error = await expectGatewayError(response, {
      status: 503,
      type: "server_error",
      code: "upstream_unavailable",
    });
    expect(error.message).toContain("lonely-chat");
    expect(retryAfter).toBeGreaterThanOrEqual(25);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(elapsed).toBeLessThan(1_000);
    expect(await upstreamCalls("lonely-route")).toBe(3);

    // A probe that fails opens it again, for twice as long.
    advance(30);
    expect((await chat("lonely-chat", `${fresh("status=500")} again`)).status).toBe(502);
    expect(await upstreamCalls("lonely-route")).toBe(4);
    const [route] = await routesOf("lonely-chat");
    expect(route).toMatchObject({ state: "open", consecutive_failures: 4 });
    expect(Date.parse(route!.retry_at!) - Date.parse(route!.opened_at!)).toBe(60_000);
    const again = await chat("lonely-chat", "hi");
    expect(again.status).toBe(503);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThanOrEqual(55);
  });

  it("lets exactly one probe through a half-open route under concurrency", async () => {
    for (let i = 0; i < 3; i++)
      expect((await chat("probe-chat", `${fresh("status=503")} hi`)).status).toBe(502);
    expect(await upstreamCalls("probe-route")).toBe(3);
    advance(30);
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => chat("probe-chat", "[[sandbox:delay=300]] together")),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 503, 503, 503, 503, 503]);
    for (const response of responses.filter((each) => each.status === 503)) {
      expect(response.headers.get("retry-after")).toBe("1");
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "upstream_unavailable",
      );
    }
    expect(await upstreamCalls("probe-route")).toBe(4);
    expect((await routesOf("probe-chat"))[0]?.state).toBe("closed");
  });

  it("does not open a route for the client's own 4xx", async () => {
    for (let i = 0; i < 6; i++)
      expect((await chat("client-error-chat", `${fresh("status=400")} bad`)).status).toBe(400);
    expect((await routesOf("client-error-chat"))[0]).toMatchObject({
      state: "closed",
      consecutive_failures: 0,
    });
    expect((await chat("client-error-chat", "fine")).status).toBe(200);
    expect(await upstreamCalls("picky-route")).toBe(7);
  });

  it("counts streams the upstream broke mid-way", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await gateway.request("/v1/chat/completions", {
        key: gateway.adminKey,
        json: {
          model: "stream-chat",
          stream: true,
          messages: [{ role: "user", content: `${fresh("drop=2")} tell me` }],
        },
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    expect((await routesOf("stream-chat"))[0]).toMatchObject({
      state: "open",
      last_failure: { kind: "dropped" },
    });
  });

  it("feeds the breaker from video task submissions", async () => {
    const user = await createUser(gateway, { balanceMicros: 20_000_000 });
    const submit = (prompt: string) =>
      gateway.request("/v1/videos/generations", {
        key: user.key,
        json: {
          model: "motion2.6-t2v",
          duration: 5,
          resolution: "720p",
          input: { prompt },
        },
      });
    for (let i = 0; i < 3; i++) {
      const response = await submit(`a storm ${fresh("status=503")}`);
      expect(response.status).toBeGreaterThanOrEqual(500);
    }
    const refused = await submit("a calm sea");
    expect(refused.status).toBe(503);
    // The video endpoints answer in the provider dialect: the spec's fields and an `error` object.
    const refusal = (await refused.clone().json()) as {
      code: string;
      message: string;
      error: { code: string; type: string };
    };
    expect(refusal.code).toBe("upstream_unavailable");
    expect(refusal.error).toMatchObject({ code: "upstream_unavailable", type: "server_error" });
    expect(refusal.message).toContain("motion2.6-t2v");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(25);
    const [route] = await routesOf("motion2.6-t2v");
    expect(route).toMatchObject({ state: "open", last_failure: { status: 503 } });
    // The refused submission holds nothing and leaves no task behind.
    const balance = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as { held_micros: number };
    expect(balance.held_micros).toBe(0);
    expect(
      (
        await gateway.request("/v1/admin/routes/reset", {
          key: gateway.adminKey,
          json: { route: route!.id },
        })
      ).status,
    ).toBe(200);
  });

  it("shows breakers to admins only, filters by state, and resets them by hand", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    expect((await gateway.request("/v1/admin/routes", { key: user.key })).status).toBe(403);
    const forbidden = await gateway.request("/v1/admin/routes/reset", {
      key: user.key,
      json: {},
    });
    expect(forbidden.status).toBe(403);

    const open = (await (
      await gateway.request("/v1/admin/routes?state=open", { key: gateway.adminKey })
    ).json()) as { data: ModelRoutes[] };
    expect(open.data.map((row) => row.model).sort()).toEqual(["lonely-chat", "stream-chat"]);

    const paged = (await (
      await gateway.request("/v1/admin/routes?limit=1", { key: gateway.adminKey })
    ).json()) as { data: ModelRoutes[]; has_more: boolean; next_cursor: string };
    expect(paged.data).toHaveLength(1);
    expect(paged.has_more).toBe(true);
    const next = (await (
      await gateway.request(`/v1/admin/routes?limit=1&cursor=${paged.next_cursor}`, {
        key: gateway.adminKey,
      })
    ).json()) as { data: ModelRoutes[] };
    expect(next.data[0]!.model > paged.data[0]!.model).toBe(true);
    await expectGatewayError(
      await gateway.request("/v1/admin/routes?cursor=not-a-cursor", { key: gateway.adminKey }),
      { status: 400, type: "invalid_request_error", code: "invalid_request" },
    );

    const [lonely] = await routesOf("lonely-chat");
    await expectGatewayError(
      await gateway.request("/v1/admin/routes/reset", {
        key: gateway.adminKey,
        json: { route: "openai:nothing@http://nowhere" },
      }),
      { status: 400, type: "invalid_request_error", code: "invalid_parameter", param: "route" },
    );
    const reset = await gateway.request("/v1/admin/routes/reset", {
      key: gateway.adminKey,
      json: { route: lonely!.id },
    });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ object: "routes_reset", route: lonely!.id, reset: 1 });
    expect((await routesOf("lonely-chat"))[0]).toMatchObject({
      state: "closed",
      consecutive_failures: 0,
    });
    expect((await routesOf("stream-chat"))[0]?.state).toBe("open");
    const calls = await upstreamCalls("lonely-route");
    expect((await chat("lonely-chat", "back")).status).toBe(200);
    expect(await upstreamCalls("lonely-route")).toBe(calls + 1);

    // No body: every breaker.
    const all = await gateway.request("/v1/admin/routes/reset", {
      key: gateway.adminKey,
      method: "POST",
    });
    expect(all.status).toBe(200);
    expect(await all.json()).toMatchObject({ route: null, reset: 1 });
    expect((await routesOf("stream-chat"))[0]?.state).toBe("closed");
  });
});
