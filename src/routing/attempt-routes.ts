/**
 * @module routing/attempt-routes
 * Runs a call against a model's routes in strategy order. A retryable upstream failure (connect
 * error, timeout, 429, 5xx) or a route without an adapter (`provider_not_configured`) moves to
 * the next route; anything else, or the last failure, is thrown. Callers only attempt work that has not yet sent a byte to the client.
 */
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";

export interface AttemptLog {
  route: ResolvedRoute;
  /** True when the call succeeded. */
  ok: boolean;
  /** The upstream failure, when the route's upstream answered with one (or could not be reached). */
  error?: UpstreamError;
  /** True when the route was passed over for want of an adapter (`provider_not_configured`). */
  unserved?: boolean;
  durationMs: number;
  /** 0 for the first route tried, 1 for the first fallback, … (set by `attemptRoutes`). */
  index?: number;
}

/** What `logAttempts` tells a request's trace (an attempt span each; see telemetry/tracing). */
export interface AttemptTracing {
  /** Before the call: the attempt's span starts, and is the trace parent of its upstream calls. */
  attemptStarted(route: ResolvedRoute, index: number, startTime?: number): void;
  attemptEnded(attempt: AttemptLog, outcome: AttemptOutcome): void;
}

/** The `onAttempt` callback of `attemptRoutes`, told also before each attempt when it asks. */
export interface AttemptObserver {
  (attempt: AttemptLog): void;
  starting?(route: ResolvedRoute, index: number): void;
}

/** How an attempt ended, for the metrics (`switchyard_upstream_attempts_total{outcome}`). */
export type AttemptOutcome =
  | "ok"
  | "timeout"
  | "connect_error"
  | "rate_limited"
  | "server_error"
  | "client_error"
  | "protocol_error"
  | "aborted"
  | "not_configured"
  | "circuit_open"
  | "internal_error";

/** What `logAttempts` reports to (the gateway's metrics satisfy it). */
export interface AttemptMetrics {
  upstreamAttempt(facts: {
    vendor: string;
    model: string;
    outcome: AttemptOutcome;
    seconds: number;
  }): void;
  upstreamFallback(facts: { model: string; fromVendor: string; toVendor: string }): void;
}

export function attemptOutcome(attempt: AttemptLog): AttemptOutcome {
  if (attempt.ok) return "ok";
  if (attempt.unserved) return "not_configured";
  const error = attempt.error;
  if (!error) return "internal_error";
  switch (error.kind) {
    case "timeout":
      return "timeout";
    case "connect":
      return "connect_error";
    case "aborted":
      return "aborted";
    case "protocol":
    case "too_large":
      return "protocol_error";
    default:
      if (error.status === 429) return "rate_limited";
      return error.status !== undefined && error.status < 500 ? "client_error" : "server_error";
  }
}

/** What `logAttempts` needs of a request (an endpoint's `OperationContext` has it all). */
export interface AttemptContext {
  requestId: string;
  /** The catalog model called (labels the attempt metrics). */
  model?: { id: string };
  services: { logger: AttemptLogger; metrics?: AttemptMetrics | undefined };
  /** Told of each route whose upstream was called (it succeeded or failed upstream). */
  routeCalled?(route: ResolvedRoute): void;
  /** The request's trace, when the gateway traces. */
  tracing?: AttemptTracing | undefined;
}

/** What `logAttempts` needs of a logger (pino's signature). */
export interface AttemptLogger {
  debug(fields: Record<string, unknown>, message: string): void;
}

/**
 * The `onAttempt` callback every endpoint uses: one debug line per attempt, with the request id,
 * `routeCalled` for each route whose upstream was called, and each attempt (and each move to a
 * next route) told to the metrics.
 */
export function logAttempts(context: AttemptContext): AttemptObserver {
  const metrics = context.services.metrics;
  const model = context.model?.id ?? "unknown";
  const tracing = context.tracing;
  let failedVendor: string | undefined;
  let started = false;
  let attempts = 0;
  const observer: AttemptObserver = (attempt: AttemptLog): void => {
    if (attempt.ok || attempt.error) context.routeCalled?.(attempt.route);
    if (tracing) {
      // An attempt reported without `starting` (a caller running its own call) gets its span now,
      // dated back to when it began.
      if (!started)
        tracing.attemptStarted(
          attempt.route,
          attempt.index ?? attempts,
          Date.now() - attempt.durationMs,
        );
      started = false;
      attempts++;
      tracing.attemptEnded(attempt, attemptOutcome(attempt));
    }
    if (metrics) {
      const vendor = attempt.route.vendor;
      if (failedVendor !== undefined)
        metrics.upstreamFallback({ model, fromVendor: failedVendor, toVendor: vendor });
      failedVendor = attempt.ok ? undefined : vendor;
      metrics.upstreamAttempt({
        vendor,
        model,
        outcome: attemptOutcome(attempt),
        seconds: attempt.durationMs / 1000,
      });
    }
    context.services.logger.debug(
      {
        requestId: context.requestId,
        vendor: attempt.route.vendor,
        failed: attempt.error?.message,
        ms: Math.round(attempt.durationMs),
      },
      "upstream attempt",
    );
  };
  if (tracing)
    observer.starting = (route, index) => {
      started = true;
      tracing.attemptStarted(route, index);
    };
  return observer;
}

/** Routes in the order they are tried: as listed for `fallback`, weighted-random for `weighted`. */
export function orderRoutes(
  model: CatalogModel,
  random: () => number = Math.random,
): ResolvedRoute[] {
  const routes = [...model.resolvedRoutes];
  if (model.route_strategy !== "weighted") return routes;
  const ordered: ResolvedRoute[] = [];
  while (routes.length > 0) {
    const total = routes.reduce((sum, route) => sum + route.weight, 0);
    const pick = random() * total;
    let cumulative = 0;
    const index = routes.findIndex((route) => {
      cumulative += route.weight;
      return pick < cumulative;
    });
    ordered.push(...routes.splice(index === -1 ? routes.length - 1 : index, 1));
  }
  return ordered;
}

export async function attemptRoutes<T>(
  model: CatalogModel,
  call: (route: ResolvedRoute) => Promise<T>,
  onAttempt?: AttemptObserver,
): Promise<T> {
  const routes = orderRoutes(model);
  if (routes.length === 0) throw new GatewayError("provider_not_configured", { model: model.id });
  let lastError: unknown;
  for (const [index, route] of routes.entries()) {
    onAttempt?.starting?.(route, index);
    const started = performance.now();
    try {
      const result = await call(route);
      onAttempt?.({ route, ok: true, durationMs: performance.now() - started, index });
      return result;
    } catch (error) {
      const upstream = UpstreamError.isInstance(error) ? error : undefined;
      // A route this deployment has no adapter for is passed over like a failed one: a later
      // route may serve the model.
      const unserved = GatewayError.isInstance(error) && error.code === "provider_not_configured";
      onAttempt?.({
        route,
        ok: false,
        error: upstream,
        ...(unserved ? { unserved } : {}),
        durationMs: performance.now() - started,
        index,
      });
      if (!upstream?.retryable && !unserved) throw error;
      lastError = error;
    }
  }
  throw lastError;
}
