/**
 * @module telemetry/prometheus
 * The Prometheus implementation of `GatewayMetrics`: one prom-client `Registry` per gateway (never
 * the global default, so several gateways in one process keep their own numbers), the Node
 * process metrics (`collectDefaultMetrics`), and the gateway's own `switchyard_*` metrics.
 * Label values are checked against closed sets where they are not closed by construction:
 * methods outside the HTTP verbs, status codes outside 100–599 and unmatched routes become
 * `other`/`unmatched`. Gauges of shared state (store and Redis health, unfinished video tasks)
 * are read at scrape time through the callbacks the composition root passes in.
 * Every metric is described in docs/metrics.md.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type {
  CollectedGauge,
  GatewayMetrics,
  HttpRequestFacts,
  ModelCallFacts,
  RefusalKind,
} from "./gateway-metrics.ts";
import { SeriesCounter, SeriesGauge, SeriesHistogram } from "./series.ts";

export interface PrometheusMetricsOptions {
  /** `switchyard_build_info{version}`. */
  version: string;
  /** Resolves when the database answers (`switchyard_store_up`). */
  probeStore?: () => Promise<unknown>;
  /** Whether Redis is connected (`switchyard_redis_up`); absent when no Redis is configured. */
  redisReady?: () => boolean;
  /** Unfinished video tasks by state (`switchyard_video_tasks`). */
  countUnfinishedVideoTasks?: () => Promise<Record<string, number>>;
  /** How long a scrape waits for the database before reporting it down. */
  probeTimeoutMs?: number;
}

/** Seconds; HTTP semantic-convention buckets plus the tail of long model calls. */
const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300,
];
/** Seconds to the first byte of a stream (GenAI time-to-first-token buckets plus a tail). */
const TTFB_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
];
/** Seconds per upstream attempt (GenAI operation-duration buckets). */
const ATTEMPT_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84,
  327.68,
];

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const REFUSAL_KINDS: readonly RefusalKind[] = [
  "rpm",
  "tpm",
  "concurrency",
  "quota_unavailable",
  "balance",
  "spend_limit",
];
const WEBHOOK_OUTCOMES = ["delivered", "failed", "gave_up"] as const;
const VIDEO_STATES = ["queued", "running"] as const;

const methodLabel = (method: string) => (METHODS.has(method) ? method : "other");
const statusLabel = (status: number) =>
  Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
const routeLabel = (route: string | undefined) => route || "unmatched";

export function createPrometheusMetrics(options: PrometheusMetricsOptions): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  new Gauge({
    name: "switchyard_build_info",
    help: "Always 1; the gateway's version and Node.js version as labels.",
    labelNames: ["version", "node_version"],
    registers,
  }).set({ version: options.version, node_version: process.version }, 1);

  // HTTP
  const httpDuration = new SeriesHistogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP requests, from arrival to the last byte (or the client leaving).",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const httpActive = new SeriesGauge({
    name: "http_server_active_requests",
    help: "HTTP requests in progress, open streams included.",
    labelNames: ["http_route"],
    registers,
  });
  const requestErrors = new Counter({
    name: "switchyard_request_errors_total",
    help: "Error answers the gateway rendered, by route and error-catalogue code.",
    labelNames: ["endpoint", "error_type"],
    registers,
  });

  // Model requests
  const requests = new SeriesCounter({
    name: "switchyard_requests_total",
    help: "Model requests answered, by endpoint, catalog model, status and stream.",
    labelNames: ["endpoint", "model", "status_code", "stream"],
    registers,
  });
  const ttfb = new SeriesHistogram({
    name: "switchyard_time_to_first_byte_seconds",
    help: "Seconds from a streamed request's arrival to its upstream answer starting.",
    labelNames: ["endpoint", "model"],
    buckets: TTFB_BUCKETS,
    registers,
  });
  const tokens = new SeriesCounter({
    name: "switchyard_tokens_total",
    help: "Billed tokens by model, vendor and type (input includes cache reads and writes; output includes reasoning).",
    labelNames: ["model", "vendor", "type"],
    registers,
  });
  const images = new Counter({
    name: "switchyard_images_total",
    help: "Billed images by model and vendor.",
    labelNames: ["model", "vendor"],
    registers,
  });
  const videoSeconds = new Counter({
    name: "switchyard_video_seconds_total",
    help: "Billed seconds of video by model and vendor.",
    labelNames: ["model", "vendor"],
    registers,
  });
  const characters = new Counter({
    name: "switchyard_speech_characters_total",
    help: "Billed characters of speech input by model and vendor.",
    labelNames: ["model", "vendor"],
    registers,
  });
  const charged = new SeriesCounter({
    name: "switchyard_charged_usd_total",
    help: "USD charged to accounts (settled), by model and vendor; summed exactly in micro-USD.",
    labelNames: ["model", "vendor"],
    registers,
    exportDivisor: 1_000_000,
  });

  // Upstream
  const attempts = new SeriesCounter({
    name: "switchyard_upstream_attempts_total",
    help: "Upstream attempts by vendor, catalog model and outcome.",
    labelNames: ["vendor", "model", "outcome"],
    registers,
  });
  const attemptDuration = new SeriesHistogram({
    name: "switchyard_upstream_attempt_duration_seconds",
    help: "Duration of upstream attempts (to the answer's start for streams), by vendor, model and outcome.",
    labelNames: ["vendor", "model", "outcome"],
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const fallbacks = new Counter({
    name: "switchyard_upstream_fallbacks_total",
    help: "Moves to a model's next route after a retryable failure.",
    labelNames: ["model", "from_vendor", "to_vendor"],
    registers,
  });

  // Admission and money
  const refusals = new Counter({
    name: "switchyard_quota_rejections_total",
    help: "Model requests refused before any upstream call, by the limit that refused them.",
    labelNames: ["kind"],
    registers,
  });
  for (const kind of REFUSAL_KINDS) refusals.inc({ kind }, 0);
  // Moved per request, read at scrape.
  let holdsOpen = 0;
  let heldMicros = 0;
  new Gauge({
    name: "switchyard_billing_holds_open",
    help: "Billing holds of model requests in progress on this instance.",
    registers,
    collect() {
      this.set(holdsOpen);
    },
  });
  new Gauge({
    name: "switchyard_billing_held_usd",
    help: "USD held by the billing holds of model requests in progress on this instance.",
    registers,
    collect() {
      this.set(heldMicros / 1_000_000);
    },
  });

  // Tasks and webhooks
  const tasksFinished = new Counter({
    name: "switchyard_video_tasks_finished_total",
    help: "Video tasks that reached a final state, by state.",
    labelNames: ["status"],
    registers,
  });
  const webhooks = new Counter({
    name: "switchyard_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome (failed: will be retried; gave_up: the last).",
    labelNames: ["outcome"],
    registers,
  });
  for (const outcome of WEBHOOK_OUTCOMES) webhooks.inc({ outcome }, 0);
  if (options.countUnfinishedVideoTasks) {
    const count = options.countUnfinishedVideoTasks;
    new Gauge({
      name: "switchyard_video_tasks",
      help: "Unfinished video tasks in the store, by state (read at scrape).",
      labelNames: ["state"],
      registers,
      async collect() {
        const counts = await count().catch(() => undefined);
        this.reset();
        if (!counts) return;
        for (const state of VIDEO_STATES) this.set({ state }, counts[state] ?? 0);
      },
    });
  }

  // Dependencies
  if (options.probeStore) {
    const probe = options.probeStore;
    const timeoutMs = options.probeTimeoutMs ?? 2000;
    new Gauge({
      name: "switchyard_store_up",
      help: "1 when the database answered a probe at scrape time, else 0.",
      registers,
      async collect() {
        this.set((await answersWithin(probe, timeoutMs)) ? 1 : 0);
      },
    });
  }
  if (options.redisReady) {
    const ready = options.redisReady;
    new Gauge({
      name: "switchyard_redis_up",
      help: "1 while the Redis connections are up, else 0.",
      registers,
      collect() {
        this.set(ready() ? 1 : 0);
      },
    });
  }

  function countUsage(facts: ModelCallFacts): void {
    const vendor = facts.vendor ?? "none";
    const labels = { model: facts.model, vendor };
    const used = facts.usage?.tokens;
    if (used) {
      const add = (type: string, value: number) => {
        if (value > 0) tokens.inc([facts.model, vendor, type], value);
      };
      add("input", used.input.total);
      add("output", used.output.total);
      add("cache_read", used.input.cacheRead);
      add("cache_write", used.input.cacheWrite);
      add("reasoning", used.output.reasoning);
    }
    const media = facts.usage?.media;
    if (media?.images?.count) images.inc(labels, media.images.count);
    if (media?.videoSeconds?.seconds) videoSeconds.inc(labels, media.videoSeconds.seconds);
    if (media?.characters) characters.inc(labels, media.characters);
    if (facts.costMicros > 0) charged.inc([facts.model, vendor], facts.costMicros);
  }

  const metrics: GatewayMetrics = {
    httpRequestStarted(route) {
      httpActive.add([routeLabel(route)], 1);
    },
    httpRequestFinished(facts: HttpRequestFacts) {
      const route = routeLabel(facts.route);
      const status = statusLabel(facts.status);
      httpActive.add([route], -1);
      httpDuration.observe([methodLabel(facts.method), route, status], facts.seconds);
      if (facts.errorCode) requestErrors.inc({ endpoint: route, error_type: facts.errorCode });
      if (facts.model)
        requests.inc([
          route,
          facts.model.id ?? "unknown",
          status,
          facts.model.stream ? "true" : "false",
        ]);
    },
    modelCallCompleted(facts) {
      countUsage(facts);
      if (facts.stream && facts.ttfbSeconds !== undefined)
        ttfb.observe([facts.endpoint, facts.model], facts.ttfbSeconds);
    },
    upstreamAttempt(facts) {
      const labels = [facts.vendor, facts.model, facts.outcome];
      attempts.inc(labels);
      attemptDuration.observe(labels, facts.seconds);
    },
    upstreamFallback(facts) {
      fallbacks.inc({
        model: facts.model,
        from_vendor: facts.fromVendor,
        to_vendor: facts.toVendor,
      });
    },
    requestRefused(kind) {
      refusals.inc({ kind });
    },
    holdOpened(micros) {
      holdsOpen += 1;
      heldMicros += micros;
    },
    holdClosed(micros) {
      holdsOpen -= 1;
      heldMicros -= micros;
    },
    videoTaskFinished(facts) {
      tasksFinished.inc({ status: facts.status });
    },
    videoTaskSettled(facts) {
      const labels = { model: facts.model, vendor: facts.vendor };
      if (facts.seconds > 0) videoSeconds.inc(labels, facts.seconds);
      if (facts.costMicros > 0) charged.inc([facts.model, facts.vendor], facts.costMicros);
    },
    webhookAttempt(outcome) {
      webhooks.inc({ outcome });
    },
    addCollectedGauge(gauge: CollectedGauge) {
      registry.removeSingleMetric(gauge.name);
      new Gauge({
        name: gauge.name,
        help: gauge.help,
        labelNames: [...gauge.labelNames],
        registers,
        collect() {
          this.reset();
          for (const { labels, value } of gauge.read()) this.set(labels, value);
        },
      });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
  // Empty until the circuit breaker registers its own reader under the same name.
  metrics.addCollectedGauge({
    name: "switchyard_upstream_circuit_state",
    help: "Circuit state per upstream route: 0 closed, 1 half-open, 2 open.",
    labelNames: ["vendor", "route"],
    read: () => [],
  });
  return metrics;
}

async function answersWithin(probe: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([probe().then(() => true as const), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
