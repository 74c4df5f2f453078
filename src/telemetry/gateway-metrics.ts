/**
 * @module telemetry/gateway-metrics
 * What the gateway tells its metrics, as one small interface (`services.metrics`): the HTTP
 * layer, the model pipeline, the route attempts, the quota and billing steps and the video task
 * engine report facts here, and only the Prometheus implementation (`prometheus.ts`) knows
 * prom-client. Every label value handed over comes from a closed set (a route template, a
 * catalog model id, a vendor key, a status code, an error code); the implementation maps
 * anything else to `other`. `NO_METRICS` is the inert default for services built by hand.
 */
import type { Usage } from "../spec/index.ts";

/** How one upstream attempt ended. */
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

/** Why a model request was refused before any upstream call (`switchyard_quota_rejections_total`). */
export type RefusalKind =
  | "rpm"
  | "tpm"
  | "concurrency"
  | "quota_unavailable"
  | "balance"
  | "spend_limit";

/** One finished HTTP request, as the HTTP layer saw it. */
export interface HttpRequestFacts {
  method: string;
  /** The route template (`/v1/chat/completions`, `/v1/videos/:id`); undefined when no route matched. */
  route: string | undefined;
  status: number;
  seconds: number;
  /** The error-catalogue code of an error answer. */
  errorCode?: string;
  /** Set for model endpoints: the catalog model asked for (undefined when unknown) and `stream`. */
  model?: { id: string | undefined; stream: boolean };
}

/** A model request the pipeline completed (its answer delivered, its usage settled). */
export interface ModelCallFacts {
  endpoint: string;
  model: string;
  /** Vendor key of the route that served it; undefined when no upstream was called. */
  vendor: string | undefined;
  /** True for a long answer (an event stream, or bytes delivered as they come). */
  stream: boolean;
  /** Seconds from arrival to the upstream's answer starting (long answers only). */
  ttfbSeconds?: number;
  usage: Usage | undefined;
  costMicros: number;
}

export interface UpstreamAttemptFacts {
  vendor: string;
  model: string;
  outcome: AttemptOutcome;
  seconds: number;
}

/** A gauge read at scrape time (e.g. `switchyard_upstream_circuit_state`, wired by its owner). */
export interface CollectedGauge {
  /** Full metric name, `switchyard_` prefixed. */
  name: string;
  help: string;
  labelNames: readonly string[];
  /** The current values; labels must come from closed sets. */
  read(): Array<{ labels: Record<string, string>; value: number }>;
}

export interface GatewayMetrics {
  /** `route` as in `HttpRequestFacts`. */
  httpRequestStarted(route: string | undefined): void;
  httpRequestFinished(facts: HttpRequestFacts): void;
  modelCallCompleted(facts: ModelCallFacts): void;
  upstreamAttempt(facts: UpstreamAttemptFacts): void;
  /** The next route was tried after `fromVendor`'s retryable failure. */
  upstreamFallback(facts: { model: string; fromVendor: string; toVendor: string }): void;
  requestRefused(kind: RefusalKind): void;
  /** A billing hold of a model request was placed, and later settled or released. */
  holdOpened(micros: number): void;
  holdClosed(micros: number): void;
  /** A video task reached its final state; a settled one with its seconds and charge. */
  videoTaskFinished(facts: { status: string }): void;
  videoTaskSettled(facts: {
    model: string;
    vendor: string;
    seconds: number;
    costMicros: number;
  }): void;
  webhookAttempt(outcome: "delivered" | "failed" | "gave_up"): void;
  /** Adds a gauge read at every scrape; a second one with the same name replaces the first. */
  addCollectedGauge(gauge: CollectedGauge): void;
  /** The exposition, in Prometheus text format. */
  render(): Promise<{ contentType: string; body: string }>;
}

const nothing = () => {};

/** Metrics that record nothing (services built by hand, `metrics.enabled: false`). */
export const NO_METRICS: GatewayMetrics = {
  httpRequestStarted: nothing,
  httpRequestFinished: nothing,
  modelCallCompleted: nothing,
  upstreamAttempt: nothing,
  upstreamFallback: nothing,
  requestRefused: nothing,
  holdOpened: nothing,
  holdClosed: nothing,
  videoTaskFinished: nothing,
  videoTaskSettled: nothing,
  webhookAttempt: nothing,
  addCollectedGauge: nothing,
  render: async () => ({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "" }),
};
