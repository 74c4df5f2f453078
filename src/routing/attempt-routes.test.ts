import { describe, expect, it } from "vitest";
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";
import { attemptOutcome, attemptRoutes, logAttempts } from "./attempt-routes.ts";

function model(vendors: string[]): CatalogModel {
  const resolvedRoutes = vendors.map((vendor) => ({ vendor, weight: 1 }) as ResolvedRoute);
  return { id: "m", route_strategy: "fallback", resolvedRoutes } as unknown as CatalogModel;
}

describe("attemptRoutes", () => {
  it("passes over a route without an adapter and answers from the next", async () => {
    const tried: string[] = [];
    const result = await attemptRoutes(model(["video-only", "openai"]), async (route) => {
      tried.push(route.vendor);
      if (route.vendor === "video-only")
        throw new GatewayError("provider_not_configured", { model: "m" });
      return "answer";
    });
    expect(result).toBe("answer");
    expect(tried).toEqual(["video-only", "openai"]);
  });

  it("moves on after a retryable upstream failure, and throws the last failure", async () => {
    const tried: string[] = [];
    const failure = attemptRoutes(model(["a", "b"]), async (route) => {
      tried.push(route.vendor);
      throw new UpstreamError({ kind: "http", status: 503, message: `${route.vendor} down` });
    });
    await expect(failure).rejects.toThrow("b down");
    expect(tried).toEqual(["a", "b"]);
  });

  it("stops at a failure that is not retryable", async () => {
    const tried: string[] = [];
    const failure = attemptRoutes(model(["a", "b"]), async (route) => {
      tried.push(route.vendor);
      throw new UpstreamError({ kind: "http", status: 400, message: "bad request" });
    });
    await expect(failure).rejects.toThrow("bad request");
    expect(tried).toEqual(["a"]);
  });
});

describe("logAttempts and the metrics", () => {
  function recorder() {
    const attempts: Array<{ vendor: string; model: string; outcome: string }> = [];
    const fallbacks: Array<{ model: string; fromVendor: string; toVendor: string }> = [];
    return {
      attempts,
      fallbacks,
      metrics: {
        upstreamAttempt: ({ vendor, model, outcome }: (typeof attempts)[number]) =>
          attempts.push({ vendor, model, outcome }),
        upstreamFallback: (facts: (typeof fallbacks)[number]) => fallbacks.push(facts),
      },
    };
  }
  const logger = { debug: () => {} };

  it("reports each attempt with its outcome, and each move to the next route", async () => {
    const seen = recorder();
    const context = {
      requestId: "r",
      model: { id: "m" },
      services: { logger, metrics: seen.metrics },
    };
    await attemptRoutes(
      model(["a", "b", "c"]),
      async (route) => {
        if (route.vendor === "a") throw new UpstreamError({ kind: "timeout", message: "slow" });
        if (route.vendor === "b")
          throw new UpstreamError({ kind: "http", status: 429, message: "busy" });
        return "answer";
      },
      logAttempts(context),
    );
    expect(seen.attempts).toEqual([
      { vendor: "a", model: "m", outcome: "timeout" },
      { vendor: "b", model: "m", outcome: "rate_limited" },
      { vendor: "c", model: "m", outcome: "ok" },
    ]);
    expect(seen.fallbacks).toEqual([
      { model: "m", fromVendor: "a", toVendor: "b" },
      { model: "m", fromVendor: "b", toVendor: "c" },
    ]);
  });

  it("names every kind of failure", () => {
    const route = { vendor: "v" } as ResolvedRoute;
    const failed = (init: ConstructorParameters<typeof UpstreamError>[0]) =>
      attemptOutcome({ route, ok: false, error: new UpstreamError(init), durationMs: 1 });
    expect(failed({ kind: "connect", message: "" })).toBe("connect_error");
    expect(failed({ kind: "aborted", message: "" })).toBe("aborted");
    expect(failed({ kind: "protocol", message: "" })).toBe("protocol_error");
    expect(failed({ kind: "too_large", message: "" })).toBe("protocol_error");
    expect(failed({ kind: "http", status: 500, message: "" })).toBe("server_error");
    expect(failed({ kind: "http", status: 401, message: "" })).toBe("client_error");
    expect(attemptOutcome({ route, ok: false, unserved: true, durationMs: 1 })).toBe(
      "not_configured",
    );
    expect(attemptOutcome({ route, ok: false, durationMs: 1 })).toBe("internal_error");
  });
});
