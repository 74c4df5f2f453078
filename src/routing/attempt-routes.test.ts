import { describe, expect, it } from "vitest";
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";
import { attemptRoutes } from "./attempt-routes.ts";

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
