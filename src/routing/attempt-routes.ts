/**
 * @module routing/attempt-routes
 * Runs a call against a model's routes in strategy order. A retryable upstream failure (connect
 * error, timeout, 429, 5xx) or a route without an adapter (`provider_not_configured`) moves to
 * the next route; anything else, or the last failure, is thrown. Callers only attempt work that has not yet sent a byte to the client.
 * Each route's circuit breaker (`circuit-breaker.ts`) is asked first: an open one is skipped
 * (outcome `circuit_open`) and told how each call it let through ended. When every route was
 * skipped the model answers `503 upstream_unavailable` with `Retry-After` at once.
 */
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";
import { ALWAYS_HEALTHY, type RouteHealth, verdictOf } from "./circuit-breaker.ts";

export interface AttemptLog {
  route: ResolvedRoute;
  /** True when the call succeeded. */
  ok: boolean;
  /** The upstream failure, when the route's upstream answered with one (or could not be reached). */
  error?: UpstreamError;
  /** True when the route was passed over for want of an adapter (`provider_not_configured`). */
  unserved?: boolean;
  /** True when the route was skipped because its circuit breaker is open. */
  circuitOpen?: boolean;
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
  if (attempt.circuitOpen) return "circuit_open";
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
        failed: attempt.error && operatorMessage(attempt.error),
        ...(attempt.circuitOpen ? { skipped: "circuit open" } : {}),
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
  health: RouteHealth = ALWAYS_HEALTHY,
): Promise<T> {
  const routes = orderRoutes(model);
  if (routes.length === 0) throw new GatewayError("provider_not_configured", { model: model.id });
  let lastError: unknown;
  let skippedForMs: number | undefined;
  for (const [index, route] of routes.entries()) {
    const admission = health.admit(route);
    if (admission.kind === "skip") {
      skippedForMs = Math.min(skippedForMs ?? Number.POSITIVE_INFINITY, admission.retryInMs);
      onAttempt?.({ route, ok: false, circuitOpen: true, durationMs: 0, index });
      continue;
    }
    onAttempt?.starting?.(route, index);
    const started = performance.now();
    try {
      const result = await call(route);
      // The answer has started; the pipeline reports how it ended (a stream may yet break).
      health.report(route, "answered");
      onAttempt?.({ route, ok: true, durationMs: performance.now() - started, index });
      return result;
    } catch (error) {
      const upstream = UpstreamError.isInstance(error) ? error : undefined;
      // A route this deployment has no adapter for is passed over like a failed one: a later
      // route may serve the model.
      const unserved = GatewayError.isInstance(error) && error.code === "provider_not_configured";
      health.report(route, unserved ? "neutral" : verdictOf(upstream), failureOf(upstream));
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
  // Every route that could serve was skipped: answer now rather than call a failing vendor.
  if (skippedForMs !== undefined && !UpstreamError.isInstance(lastError))
    throw upstreamUnavailable(model, skippedForMs);
  throw lastError;
}

/**
 * For work that calls one route only (a video task's submission): the first of `routes` its
 * breaker lets through, the others reported as skipped; `503 upstream_unavailable` when none is.
 * The caller reports how the call ended to `health` (`neutral` when it never called).
 */
export function admitFirst(
  model: CatalogModel,
  routes: readonly ResolvedRoute[],
  health: RouteHealth = ALWAYS_HEALTHY,
  onAttempt?: (attempt: AttemptLog) => void,
): ResolvedRoute | undefined {
  let skippedForMs: number | undefined;
  for (const route of routes) {
    const admission = health.admit(route);
    if (admission.kind !== "skip") return route;
    skippedForMs = Math.min(skippedForMs ?? Number.POSITIVE_INFINITY, admission.retryInMs);
    onAttempt?.({ route, ok: false, circuitOpen: true, durationMs: 0 });
  }
  if (skippedForMs !== undefined) throw upstreamUnavailable(model, skippedForMs);
  return undefined;
}

function upstreamUnavailable(model: CatalogModel, retryInMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  return new GatewayError(
    "upstream_unavailable",
    { model: model.id, seconds },
    { headers: { "retry-after": String(seconds) } },
  );
}

function failureOf(error: UpstreamError | undefined) {
  if (!error) return undefined;
  return {
    kind: error.kind,
    ...(error.status === undefined ? {} : { status: error.status }),
    message: operatorMessage(error).slice(0, 300),
  };
}

/**
 * An upstream failure as the operator reads it (logs, route health): a connection failure with
 * the network library's own text, which names the upstream's address — kept from the client.
 */
function operatorMessage(error: UpstreamError): string {
  return error.kind === "connect" && error.cause instanceof Error
    ? `${error.message} ${error.cause.message}`
    : error.message;
}
