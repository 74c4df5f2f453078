/**
 * @module main/build-parts
 * Concrete services the composition root (`src/main.ts`) builds: this gateway's metrics
 * registry, the tracer when tracing is on, the signed-webhook dispatcher and the video task
 * engine. Part of the composition root: nothing else imports it.
 */
import { readFileSync } from "node:fs";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "pino";
import type { Config } from "../config/index.ts";
import { GatewayError } from "../errors/index.ts";
import { POLLED_CACHE_TTL_MS } from "../ops/change-feed.ts";
import type { createProviderRegistry } from "../providers/index.ts";
import type { RedisConnection, Store } from "../store/index.ts";
import { startVideoEngine, type TaskModels, type VideoTaskService } from "../tasks/index.ts";
import {
  checkWebhookUrl,
  createWebhookDispatcher,
  newWebhookSecret,
  pinnedLookup,
  WebhookUrlError,
} from "../tasks/webhooks/index.ts";
import { createPrometheusMetrics, type GatewayMetrics } from "../telemetry/index.ts";

/** This gateway's own metrics registry, with the gauges read from the store and Redis. */
export function createMetrics(store: Store, redis: RedisConnection | undefined): GatewayMetrics {
  return createPrometheusMetrics({
    version: packageVersion(),
    // A primary-key lookup: answers whenever the database does.
    probeStore: () => store.findAccountById("acc_metrics_probe"),
    ...(redis ? { redisReady: () => redis.ready } : {}),
    countUnfinishedVideoTasks: () => store.countUnfinishedVideoTasks(),
  });
}

/** Signed webhook delivery on the `webhooks.*` settings, for budget alerts. */
export function webhookDispatcher(config: Config) {
  return createWebhookDispatcher({
    policy: {
      allowLoopback: config.webhooks.allow_loopback,
      allowPrivate: config.webhooks.allow_private_addresses,
    },
    timeoutMs: config.webhooks.timeout_ms,
    schedule: {
      baseDelayMs: config.webhooks.retry_base_ms,
      factor: 3,
      maxDelayMs: config.webhooks.retry_max_ms,
      jitter: 0.1,
      giveUpAfterMs: config.webhooks.give_up_after_seconds * 1000,
    },
  });
}

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/**
 * The tracer, when tracing is on (`tracing.endpoint`, or an exporter handed in by a test); the
 * OpenTelemetry SDK is loaded only then.
 */
export async function startTracing(config: Config, exporter: SpanExporter | undefined) {
  if (!config.tracing.endpoint && !exporter) return undefined;
  const { createTracing } = await import("../telemetry/otlp-tracing.ts");
  return createTracing({
    endpoint: config.tracing.endpoint,
    exporter,
    serviceName: config.tracing.service_name,
    version: packageVersion(),
    sampleRatio: config.tracing.sample_ratio,
  });
}

/**
 * Vets a file URL a vendor's answer named (a synthesized audio file, say) before the gateway
 * fetches it: the webhook address policy (`webhooks.allow_loopback`,
 * `webhooks.allow_private_addresses`), and the connection pinned to the addresses checked.
 */
export function vendorFileGuard(config: Config) {
  const policy = {
    allowLoopback: config.webhooks.allow_loopback,
    allowPrivate: config.webhooks.allow_private_addresses,
  };
  return async (url: string) => {
    const checked = await checkWebhookUrl(url, policy);
    return { lookup: pinnedLookup(checked.addresses) };
  };
}

/**
 * A webhook attempt's lease: `tasks.lease_seconds`, but never shorter than an attempt may take
 * (`webhooks.timeout_ms`) plus a margin, or another instance could start the same attempt.
 */
export function webhookLeaseMs(config: Config): number {
  return Math.max(config.tasks.lease_seconds * 1000, config.webhooks.timeout_ms + 5_000);
}

/** The video task engine and what the endpoints need of it. */
export function createVideoTasks(
  config: Config,
  deps: {
    store: Store & { dialect?: string };
    models: TaskModels;
    providers: ReturnType<typeof createProviderRegistry>;
    logger: Logger;
    instanceId: string;
    metrics: GatewayMetrics | undefined;
    /** A task's charge was written (budget alerts). */
    onCharged?(charge: { accountId: string; costMicros: number }): void;
  },
): VideoTaskService {
  const tasks = config.tasks;
  const policy = {
    allowLoopback: config.webhooks.allow_loopback,
    allowPrivate: config.webhooks.allow_private_addresses,
  };
  const engine = startVideoEngine({
    store: deps.store,
    models: deps.models,
    videoModel: (route) => deps.providers.videoModel(route),
    webhooks: webhookDispatcher(config),
    logger: deps.logger,
    clock: Date.now,
    instanceId: deps.instanceId,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ...(deps.onCharged ? { onCharged: deps.onCharged } : {}),
    options: {
      tickMs: tasks.tick_ms,
      pollMinIntervalMs: tasks.poll_min_interval_ms,
      pollMaxIntervalMs: tasks.poll_max_interval_ms,
      maxAgeMs: tasks.max_age_seconds * 1000,
      submitGraceMs: tasks.submit_grace_seconds * 1000,
      leaseMs: tasks.lease_seconds * 1000,
      webhookLeaseMs: webhookLeaseMs(config),
      vendorPollsPerSecond: () => tasks.vendor_polls_per_second,
      batchSize: 50,
      singleProcess: deps.store.dialect === "sqlite",
    },
  });
  return {
    kick: engine.kick,
    finish: engine.finish,
    routeOf: (task) => deps.models.routeOf(task),
    remember: (modelId, route) => deps.models.remember(modelId, route),
    runOnce: engine.runOnce,
    close: engine.stop,
    newWebhookSecret,
    submitGraceMs: tasks.submit_grace_seconds * 1000,
    firstPollMs: tasks.poll_min_interval_ms,
    async checkWebhookUrl(url) {
      try {
        await checkWebhookUrl(url, policy);
      } catch (error) {
        if (!(error instanceof WebhookUrlError)) throw error;
        throw new GatewayError(
          "invalid_parameter",
          { detail: `Invalid 'webhook_url': ${error.message}` },
          { param: "webhook_url" },
        );
      }
    },
  };
}

/**
 * How long a key lookup is cached: as configured on a database only this process uses, or while
 * other instances' changes are heard of (Redis); otherwise a second, so a key revoked through
 * another instance stops working here within a second.
 */
export function keyCacheTtl(
  config: Config,
  store: Store,
  changesHeard: (() => boolean) | undefined,
): number | (() => number) {
  const configured = config.auth.key_cache_ttl_seconds * 1000;
  if ((store as Store & { dialect?: string }).dialect === "sqlite") return configured;
  const polled = Math.min(configured, POLLED_CACHE_TTL_MS);
  return () => (changesHeard?.() ? configured : polled);
}
