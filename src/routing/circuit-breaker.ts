/**
 * @module routing/circuit-breaker
 * Upstream health per route: one circuit breaker per upstream (vendor, upstream model, base
 * URL), kept in this process's memory. Closed, it lets every request through and counts the
 * route's consecutive failures that are the vendor's doing; at `failureThreshold` it opens and
 * routing skips the route for a cooldown. Once the cooldown is over the route is half-open: one
 * request (the probe) is let through while concurrent ones still skip it; a probe that succeeds
 * closes the breaker, one that fails opens it again for twice the last cooldown, at most
 * `maxCooldownMs`. The clock is injected, so tests move time instead of waiting for it.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { UpstreamError } from "../spec/index.ts";

export type CircuitState = "closed" | "open" | "half_open";

export interface CircuitBreakerSettings {
  enabled: boolean;
  failureThreshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

/** The last failure counted against a route. */
export interface RouteFailure {
  at: number;
  /** The vendor's HTTP status, when it answered with one. */
  status?: number;
  /** `http`, `timeout`, `connect`, `protocol`, or `dropped` (a stream that broke mid-way). */
  kind: string;
  message: string;
}

/** One route's health, as the admin API and the metrics show it. */
export interface RouteHealthView {
  id: string;
  vendor: string;
  state: CircuitState;
  consecutiveFailures: number;
  lastFailure?: RouteFailure;
  /** When the breaker last opened (Unix ms). */
  openedAt?: number;
  /** When the open breaker lets its next probe through (Unix ms). */
  retryAt?: number;
  /** True while a half-open route's probe is running. */
  probing: boolean;
}

/**
 * What routing asks before calling a route: `pass` (closed), `probe` (the one request let
 * through a half-open breaker; its outcome must be reported), or `skip` with how long until the
 * route may be tried again.
 */
export type Admission = { kind: "pass" } | { kind: "probe" } | { kind: "skip"; retryInMs: number };

/**
 * How a call on a route ended, as far as the route's health is concerned. `answered`: the
 * upstream started a successful answer (it closes an open or half-open breaker, but a closed
 * one's failure count waits for the end: a stream may still break); `success`: the whole answer
 * arrived.
 */
export type CallVerdict = "answered" | "success" | "failure" | "neutral";

export interface RouteHealth {
  readonly enabled: boolean;
  admit(route: ResolvedRoute): Admission;
  /** Reports a call's outcome; `failure` carries what went wrong. */
  report(route: ResolvedRoute, verdict: CallVerdict, failure?: Omit<RouteFailure, "at">): void;
  view(route: ResolvedRoute): RouteHealthView;
  /** Closes one breaker (by route id) or all; returns how many were not closed before. */
  reset(id?: string): number;
}

/** A route's identity: the same upstream used by several models shares one breaker. */
export function routeId(route: Pick<ResolvedRoute, "vendor" | "upstreamModel" | "baseUrl">) {
  return `${route.vendor}:${route.upstreamModel}@${route.baseUrl}`;
}

/**
 * Whether an upstream failure is the route's: 5xx, 408, 429 (the route cannot serve now), 401
 * and 403 (the route's credential refused), timeouts, refused or broken connections and unreadable answers count; the client's own 4xx, a
 * too large answer (it depends on the request) and a client that went away do not.
 */
export function verdictOf(error: UpstreamError | undefined): CallVerdict {
  if (!error) return "neutral";
  switch (error.kind) {
    case "connect":
    case "timeout":
    case "protocol":
      return "failure";
    case "aborted":
    case "too_large":
      return "neutral";
    default: {
      const status = error.status;
      if (status === undefined) return "failure";
      // 401 and 403 refuse the gateway's credential for the route, not the client's request.
      return status >= 500 || status === 429 || status === 408 || status === 401 || status === 403
        ? "failure"
        : "neutral";
    }
  }
}

interface Breaker {
  id: string;
  vendor: string;
  failures: number;
  lastFailure?: RouteFailure;
  /** Set while open or half-open. */
  openedAt?: number;
  retryAt?: number;
  /** The cooldown of the current (or last) opening. */
  cooldownMs: number;
  /** When the running probe was let through; undefined when none runs. */
  probeSince?: number;
}

/** The in-memory implementation; `now` is read at every decision. */
export function createRouteHealth(
  settings: CircuitBreakerSettings,
  now: () => number,
): RouteHealth {
  const breakers = new Map<string, Breaker>();

  const breakerOf = (route: ResolvedRoute): Breaker => {
    const id = routeId(route);
    let breaker = breakers.get(id);
    if (!breaker) {
      breaker = { id, vendor: route.vendor, failures: 0, cooldownMs: settings.cooldownMs };
      breakers.set(id, breaker);
    }
    return breaker;
  };

  const stateOf = (breaker: Breaker, at: number): CircuitState => {
    if (breaker.retryAt === undefined) return "closed";
    return at >= breaker.retryAt ? "half_open" : "open";
  };

  // A probe that never reports (it should always report) stops blocking after this long.
  const probeExpired = (breaker: Breaker, at: number) =>
    breaker.probeSince !== undefined && at - breaker.probeSince > settings.maxCooldownMs;

  const open = (breaker: Breaker, at: number, cooldownMs: number) => {
    breaker.openedAt = at;
    breaker.cooldownMs = cooldownMs;
    breaker.retryAt = at + cooldownMs;
    breaker.probeSince = undefined;
  };

  const close = (breaker: Breaker) => {
    breaker.failures = 0;
    breaker.openedAt = undefined;
    breaker.retryAt = undefined;
    breaker.probeSince = undefined;
    breaker.cooldownMs = settings.cooldownMs;
  };

  const view = (breaker: Breaker): RouteHealthView => {
    const state = stateOf(breaker, now());
    return {
      id: breaker.id,
      vendor: breaker.vendor,
      state,
      consecutiveFailures: breaker.failures,
      ...(breaker.lastFailure ? { lastFailure: breaker.lastFailure } : {}),
      ...(breaker.openedAt !== undefined ? { openedAt: breaker.openedAt } : {}),
      ...(breaker.retryAt !== undefined ? { retryAt: breaker.retryAt } : {}),
      probing: state === "half_open" && breaker.probeSince !== undefined,
    };
  };

  return {
    enabled: settings.enabled,
    admit(route) {
      if (!settings.enabled) return { kind: "pass" };
      const breaker = breakers.get(routeId(route));
      if (!breaker) return { kind: "pass" };
      const at = now();
      const state = stateOf(breaker, at);
      if (state === "closed") return { kind: "pass" };
      if (state === "open") return { kind: "skip", retryInMs: breaker.retryAt! - at };
      // Another request is the probe; its answer decides, usually within seconds.
      if (breaker.probeSince !== undefined && !probeExpired(breaker, at))
        return { kind: "skip", retryInMs: 1000 };
      breaker.probeSince = at;
      return { kind: "probe" };
    },
    report(route, verdict, failure) {
      if (!settings.enabled) return;
      const existing = breakers.get(routeId(route));
      if (verdict === "neutral") {
        // The upstream answered (the client's 4xx) or nobody knows (the client left): the
        // route's health is unchanged, but a probe that ended so lets the next one through.
        if (existing) existing.probeSince = undefined;
        return;
      }
      if (verdict === "answered") {
        if (existing?.retryAt !== undefined) close(existing);
        return;
      }
      if (verdict === "success") {
        if (existing && (existing.failures > 0 || existing.retryAt !== undefined)) close(existing);
        return;
      }
      const at = now();
      const breaker = existing ?? breakerOf(route);
      breaker.failures += 1;
      breaker.lastFailure = { at, kind: failure?.kind ?? "http", message: "", ...failure };
      const state = stateOf(breaker, at);
      if (state === "half_open") {
        // The probe (or a call let through before the breaker opened) failed: open again, longer.
        open(breaker, at, Math.min(settings.maxCooldownMs, breaker.cooldownMs * 2));
      } else if (state === "closed" && breaker.failures >= settings.failureThreshold) {
        open(breaker, at, settings.cooldownMs);
      }
    },
    view: (route) =>
      view(
        breakers.get(routeId(route)) ?? {
          id: routeId(route),
          vendor: route.vendor,
          failures: 0,
          cooldownMs: settings.cooldownMs,
        },
      ),
    reset(id) {
      let reset = 0;
      for (const breaker of breakers.values()) {
        if (id !== undefined && breaker.id !== id) continue;
        if (breaker.failures > 0 || breaker.retryAt !== undefined) reset += 1;
        close(breaker);
      }
      return reset;
    },
  };
}

/** Health that never skips a route (`routing.circuit_breaker.enabled: false`, hand-built services). */
export const ALWAYS_HEALTHY: RouteHealth = createRouteHealth(
  { enabled: false, failureThreshold: 1, cooldownMs: 1, maxCooldownMs: 1 },
  Date.now,
);

/** The gauge's value of each state. */
const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * `switchyard_upstream_circuit_state{vendor, route}`, read at each scrape over the routes the
 * catalog has now (a closed set: route ids come from the catalog), for `addCollectedGauge`.
 */
export function circuitStateGauge(health: RouteHealth, routes: () => Iterable<ResolvedRoute>) {
  return {
    name: "switchyard_upstream_circuit_state",
    help: "Circuit state per upstream route: 0 closed, 1 half-open, 2 open.",
    labelNames: ["vendor", "route"] as const,
    read() {
      const seen = new Map<string, { labels: Record<string, string>; value: number }>();
      for (const route of routes()) {
        const view = health.view(route);
        if (!seen.has(view.id))
          seen.set(view.id, {
            labels: { vendor: view.vendor, route: view.id },
            value: STATE_VALUE[view.state],
          });
      }
      return [...seen.values()];
    },
  };
}

/** Every resolved route of a catalog's models, in catalog order. */
export function* catalogRoutes(models: Iterable<{ resolvedRoutes: ResolvedRoute[] }>) {
  for (const model of models) yield* model.resolvedRoutes;
}
