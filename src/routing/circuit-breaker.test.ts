import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";
import { attemptOutcome, attemptRoutes } from "./attempt-routes.ts";
import {
  type CircuitBreakerSettings,
  circuitStateGauge,
  createRouteHealth,
  routeId,
  verdictOf,
} from "./circuit-breaker.ts";

const route = (vendor: string, upstreamModel = "m-up") =>
  ({ vendor, upstreamModel, baseUrl: `http://${vendor}.test/v1`, weight: 1 }) as ResolvedRoute;

const settings: CircuitBreakerSettings = {
  enabled: true,
  failureThreshold: 3,
  cooldownMs: 10_000,
  maxCooldownMs: 60_000,
};

function clocked(overrides: Partial<CircuitBreakerSettings> = {}) {
  let now = 1_000_000;
  const health = createRouteHealth({ ...settings, ...overrides }, () => now);
  return { health, advance: (ms: number) => (now += ms), now: () => now };
}

const fail = { kind: "http", status: 503, message: "down" };

describe("circuit breaker", () => {
  it("opens after the threshold of consecutive failures and skips the route for its cooldown", () => {
    const { health, advance } = clocked();
    const a = route("a");
    health.report(a, "failure", fail);
    health.report(a, "failure", fail);
    expect(health.admit(a)).toEqual({ kind: "pass" });
    health.report(a, "failure", fail);
    expect(health.view(a)).toMatchObject({ state: "open", consecutiveFailures: 3 });
    expect(health.admit(a)).toEqual({ kind: "skip", retryInMs: 10_000 });
    advance(9_999);
    expect(health.admit(a)).toEqual({ kind: "skip", retryInMs: 1 });
    advance(1);
    expect(health.view(a).state).toBe("half_open");
    expect(health.admit(a)).toEqual({ kind: "probe" });
  });

  it("a success in between starts the count again; a neutral outcome changes nothing", () => {
    const { health } = clocked();
    const a = route("a");
    health.report(a, "failure", fail);
    health.report(a, "failure", fail);
    health.report(a, "success");
    health.report(a, "failure", fail);
    health.report(a, "neutral");
    health.report(a, "failure", fail);
    expect(health.view(a)).toMatchObject({ state: "closed", consecutiveFailures: 2 });
  });

  it("an answer that has only started closes an open breaker but leaves a closed one's count", () => {
    const { health, advance } = clocked();
    const a = route("a");
    health.report(a, "failure", fail);
    health.report(a, "failure", fail);
    health.report(a, "answered");
    expect(health.view(a).consecutiveFailures).toBe(2);
    health.report(a, "failure", { kind: "dropped", message: "broke" });
    expect(health.view(a).state).toBe("open");
    advance(10_000);
    expect(health.admit(a).kind).toBe("probe");
    health.report(a, "answered");
    expect(health.view(a)).toMatchObject({ state: "closed", consecutiveFailures: 0 });
  });

  it("lets one probe through a half-open breaker; success closes it", () => {
    const { health, advance } = clocked();
    const a = route("a");
    for (let i = 0; i < 3; i++) health.report(a, "failure", fail);
    advance(10_000);
    expect(health.admit(a).kind).toBe("probe");
    expect(health.admit(a)).toEqual({ kind: "skip", retryInMs: 1000 });
    expect(health.view(a).probing).toBe(true);
    health.report(a, "success");
    expect(health.view(a)).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    expect(health.admit(a).kind).toBe("pass");
  });

  it("a failed probe reopens with a doubled cooldown, capped", () => {
    const { health, advance } = clocked();
    const a = route("a");
    for (let i = 0; i < 3; i++) health.report(a, "failure", fail);
    const cooldowns: number[] = [];
    for (let round = 0; round < 5; round++) {
      const retryIn = (health.admit(a) as { retryInMs: number }).retryInMs;
      cooldowns.push(retryIn);
      advance(retryIn);
      expect(health.admit(a).kind).toBe("probe");
      health.report(a, "failure", fail);
    }
    expect(cooldowns).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
    // Success after all that: back to the base cooldown for the next opening.
    advance(60_000);
    expect(health.admit(a).kind).toBe("probe");
    health.report(a, "success");
    for (let i = 0; i < 3; i++) health.report(a, "failure", fail);
    expect(health.admit(a)).toEqual({ kind: "skip", retryInMs: 10_000 });
  });

  it("a probe that ends neutral (client error, client gone) lets the next request probe", () => {
    const { health, advance } = clocked();
    const a = route("a");
    for (let i = 0; i < 3; i++) health.report(a, "failure", fail);
    advance(10_000);
    expect(health.admit(a).kind).toBe("probe");
    health.report(a, "neutral");
    expect(health.view(a).state).toBe("half_open");
    expect(health.admit(a).kind).toBe("probe");
  });

  it("reset closes one breaker by id, or all", () => {
    const { health } = clocked();
    const [a, b] = [route("a"), route("b")];
    for (let i = 0; i < 3; i++) {
      health.report(a, "failure", fail);
      health.report(b, "failure", fail);
    }
    expect(health.reset(routeId(a))).toBe(1);
    expect(health.view(a).state).toBe("closed");
    expect(health.view(b).state).toBe("open");
    expect(health.reset()).toBe(1);
    expect(health.view(b).state).toBe("closed");
  });

  it("disabled, it never skips", () => {
    const { health } = clocked({ enabled: false });
    const a = route("a");
    for (let i = 0; i < 10; i++) health.report(a, "failure", fail);
    expect(health.admit(a).kind).toBe("pass");
  });

  it("counts the vendor's failures, not the client's", () => {
    const http = (status: number) => new UpstreamError({ kind: "http", status, message: "x" });
    expect(verdictOf(http(500))).toBe("failure");
    expect(verdictOf(http(503))).toBe("failure");
    expect(verdictOf(http(429))).toBe("failure");
    // The route's credential refused: every request of the route would meet it.
    expect(verdictOf(http(401))).toBe("failure");
    expect(verdictOf(http(403))).toBe("failure");
    expect(verdictOf(http(400))).toBe("neutral");
    expect(verdictOf(http(404))).toBe("neutral");
    expect(verdictOf(http(422))).toBe("neutral");
    expect(verdictOf(new UpstreamError({ kind: "timeout", message: "t" }))).toBe("failure");
    expect(verdictOf(new UpstreamError({ kind: "connect", message: "c" }))).toBe("failure");
    expect(verdictOf(new UpstreamError({ kind: "aborted", message: "a" }))).toBe("neutral");
    expect(verdictOf(undefined)).toBe("neutral");
  });

  it("the gauge reads 0 closed, 1 half-open, 2 open, once per route", () => {
    const { health, advance } = clocked();
    const [a, b] = [route("a"), route("b")];
    for (let i = 0; i < 3; i++) health.report(a, "failure", fail);
    const gauge = circuitStateGauge(health, () => [a, b, a]);
    const read = () => gauge.read().map((sample) => [sample.labels.vendor, sample.value]);
    expect(read()).toEqual([
      ["a", 2],
      ["b", 0],
    ]);
    advance(10_000);
    expect(read()).toEqual([
      ["a", 1],
      ["b", 0],
    ]);
  });

  it("property: an open breaker never admits; half-open admits one probe at a time", () => {
    type Step =
      | { op: "call"; outcome: "answered" | "success" | "failure" | "neutral" | "pending" }
      | { op: "finish"; outcome: "success" | "failure" | "neutral" }
      | { op: "wait"; ms: number };
    const step = fc.oneof(
      fc.record({
        op: fc.constant("call" as const),
        outcome: fc.constantFrom("answered", "success", "failure", "neutral", "pending" as const),
      }),
      fc.record({
        op: fc.constant("finish" as const),
        outcome: fc.constantFrom("success", "failure", "neutral" as const),
      }),
      fc.record({ op: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 70_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps: Step[]) => {
        const { health, advance, now } = clocked();
        const a = route("a");
        let pendingProbe = false;
        let probeAt = 0;
        let lastCooldown = 0;
        for (const current of steps) {
          if (current.op === "wait") {
            advance(current.ms);
            continue;
          }
          if (current.op === "finish") {
            if (!pendingProbe) continue;
            pendingProbe = false;
            health.report(a, current.outcome, fail);
            continue;
          }
          const before = health.view(a);
          const admission = health.admit(a);
          if (before.state === "open") expect(admission.kind).toBe("skip");
          if (before.state === "closed") expect(admission.kind).toBe("pass");
          // A probe that never reports stops blocking after the longest cooldown.
          const blocked = pendingProbe && now() - probeAt <= settings.maxCooldownMs;
          if (before.state === "half_open") expect(admission.kind).toBe(blocked ? "skip" : "probe");
          if (admission.kind === "skip") continue;
          if (current.outcome === "pending" && admission.kind === "probe") {
            pendingProbe = true;
            probeAt = now();
            continue;
          }
          const outcome = current.outcome === "pending" ? "success" : current.outcome;
          health.report(a, outcome, fail);
          const after = health.view(a);
          if (outcome === "success" || outcome === "answered") expect(after.state).toBe("closed");
          if (after.state === "open") {
            const cooldown = after.retryAt! - after.openedAt!;
            expect(cooldown).toBeLessThanOrEqual(settings.maxCooldownMs);
            expect(cooldown).toBeGreaterThanOrEqual(settings.cooldownMs);
            if (admission.kind === "probe")
              expect(cooldown).toBe(Math.min(settings.maxCooldownMs, lastCooldown * 2));
            lastCooldown = cooldown;
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("attemptRoutes with route health", () => {
  const model = (vendors: string[]) =>
    ({
      id: "m",
      route_strategy: "fallback",
      resolvedRoutes: vendors.map((vendor) => route(vendor)),
    }) as unknown as CatalogModel;

  it("skips an open route (outcome circuit_open) and answers from the next", async () => {
    const { health } = clocked();
    for (let i = 0; i < 3; i++) health.report(route("a"), "failure", fail);
    const tried: string[] = [];
    const outcomes: string[] = [];
    const result = await attemptRoutes(
      model(["a", "b"]),
      async (chosen) => {
        tried.push(chosen.vendor);
        return "answer";
      },
      (attempt) => outcomes.push(`${attempt.route.vendor}:${attemptOutcome(attempt)}`),
      health,
    );
    expect(result).toBe("answer");
    expect(tried).toEqual(["b"]);
    expect(outcomes).toEqual(["a:circuit_open", "b:ok"]);
  });

  it("answers 503 upstream_unavailable with Retry-After when every route is open", async () => {
    const { health, advance } = clocked();
    for (let i = 0; i < 3; i++) health.report(route("a"), "failure", fail);
    advance(2_500);
    for (let i = 0; i < 3; i++) health.report(route("b"), "failure", fail);
    let called = false;
    const failure = attemptRoutes(
      model(["a", "b"]),
      async () => {
        called = true;
      },
      undefined,
      health,
    );
    await expect(failure).rejects.toSatisfy(
      (error) =>
        GatewayError.isInstance(error) &&
        error.code === "upstream_unavailable" &&
        error.status === 503 &&
        error.headers["retry-after"] === "8",
    );
    expect(called).toBe(false);
  });

  it("counts a route's failures from its calls", async () => {
    const { health } = clocked();
    const down = async () => {
      throw new UpstreamError({ kind: "http", status: 502, message: "bad gateway" });
    };
    for (let i = 0; i < 3; i++)
      await attemptRoutes(model(["a"]), down, undefined, health).catch(() => {});
    expect(health.view(route("a"))).toMatchObject({
      state: "open",
      lastFailure: { status: 502, kind: "http", message: "bad gateway" },
    });
  });
});
