/**
 * @module main
 * The composition root: reads configuration, starts the sandbox when it is to serve every vendor
 * (`sandbox.mode: always`, or `auto` with no credential set), opens the database (waiting for it
 * to come up), builds the concrete services (with its parts and start-up steps in `src/main/`),
 * bootstraps the first admin, and starts the HTTP server with a graceful drain and a SIGHUP reload. Nothing else
 * builds concrete services.
 */
import { existsSync } from "node:fs";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApp } from "./app.ts";
import { type Authenticator, createAttemptLimiter, createAuthenticator } from "./auth/index.ts";
import { createLedgerBilling, startInflightRecovery, warmTokenizer } from "./billing/index.ts";
import { bootstrapAdmin } from "./bootstrap.ts";
import { type CatalogData, routingBanner } from "./catalog/index.ts";
import { type Config, configFilePath, loadConfig } from "./config/index.ts";
import { quotaDefaults } from "./core/quota-defaults.ts";
import type { Services } from "./core/services.ts";
import type { Lifecycle } from "./endpoints/system/routes.ts";
import { createMemoryQuotas, createRedisQuotas } from "./limits/index.ts";
import {
  createMetrics,
  createVideoTasks,
  keyCacheTtl,
  startTracing,
  vendorFileGuard,
  webhookDispatcher,
  webhookLeaseMs,
} from "./main/build-parts.ts";
import {
  buildCatalog,
  createLogger,
  loadCatalogFor,
  refuseServedSqliteFile,
  reloadCatalogBuilder,
  startSandboxIfNeeded,
} from "./main/start-up.ts";
import {
  applyChange,
  type ChangeEvent,
  publishingInvalidations,
  redisChangeFeed,
  silentChangeFeed,
  watchConfigFile,
} from "./ops/change-feed.ts";
import { describeListenError, ListenError } from "./ops/listen-error.ts";
import { openRedis } from "./ops/open-redis.ts";
import { openGatewayStore } from "./ops/open-store.ts";
import { createReloader, type ReloadOutcome } from "./ops/reload.ts";
import { createHttpClient, createProviderRegistry } from "./providers/index.ts";
import { catalogRoutes, circuitStateGauge, createRouteHealth } from "./routing/index.ts";
import {
  claimSqliteFile,
  describeDatabaseUrl,
  type RedisConnection,
  randomBase62,
  type Store,
} from "./store/index.ts";
import { createBudgetAlerts, taskModels } from "./tasks/index.ts";
import { type GatewayTracer, startMetricsListener } from "./telemetry/index.ts";

export { createLogger, prepareDatabase, startSharedSandbox } from "./main/start-up.ts";

export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  services: Services;
  sandboxUrl: string | undefined;
  /** The first admin key, when this start created it. */
  bootstrapKey: string | undefined;
  /**
   * Drains and stops: `/readyz` answers 503 at once, the listener stays open for
   * `drainDelaySeconds` (0 by default), then closes and in-flight requests finish.
   */
  close(options?: { drainDelaySeconds?: number }): Promise<void>;
  /** Ends a drain delay early (a second signal); the close goes on. */
  skipDrainDelay(): void;
  /** Applies a changed configuration and catalog where it can (SIGHUP); see ops/reload.ts. */
  reload(): ReloadOutcome | undefined;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  config?: Config;
  logger?: Logger;
  /** Where the start-up banner goes; defaults to stdout. */
  print?: (line: string) => void;
  /** Spans go here instead of to `tracing.endpoint`, and tracing is on (tests). */
  spanExporter?: SpanExporter;
  /**
   * A stop signal during start-up: the wait for the database ends at once, and the start fails
   * with `StoppedWhileWaiting` (the command line exits 0).
   */
  stop?: AbortSignal;
}

export async function buildServices(
  config: Config,
  options: {
    env: Record<string, string | undefined>;
    logger: Logger;
    sandboxUrl: string | undefined;
    data: CatalogData;
    store: Store;
    instanceId: string;
    /** Shared quota counters and leases, when `REDIS_URL` is set. */
    redis?: RedisConnection | undefined;
    /** Whether other instances' changes are heard of now (else key lookups are polled). */
    changesHeard?: () => boolean;
    /** Request and attempt spans, when tracing is on. */
    tracer?: GatewayTracer | undefined;
  },
): Promise<Services> {
  const catalog = buildCatalog(config, options.data, options.env, options.sandboxUrl);
  const http = createHttpClient(
    {
      connectMs: config.upstream.connect_timeout_ms,
      firstByteMs: config.upstream.first_byte_timeout_ms,
      idleMs: config.upstream.idle_timeout_ms,
    },
    {
      maxResponseBytes: config.upstream.max_response_bytes,
      maxStreamBytes: config.upstream.max_stream_bytes,
    },
    { vetDownload: vendorFileGuard(config) },
  );
  const providers = createProviderRegistry(http);
  const metrics = config.metrics.enabled ? createMetrics(options.store, options.redis) : undefined;
  // The engine reads the catalog through the services, so a SIGHUP reload reaches it too.
  let services: Services | undefined;
  const budgets = createBudgetAlerts({
    store: options.store,
    webhooks: webhookDispatcher(config),
    logger: options.logger,
    clock: () => (services ?? { now: Date.now }).now(),
    thresholds: () => (services?.config ?? config).budgets.alert_thresholds,
    sweepMs: config.tasks.tick_ms,
    leaseMs: webhookLeaseMs(config),
    ...(metrics && { metrics }),
  });
  const videoTasks = createVideoTasks(config, {
    store: options.store,
    models: taskModels(() => services?.catalog ?? catalog),
    providers,
    logger: options.logger,
    instanceId: options.instanceId,
    metrics,
    onCharged: (charge) => budgets.charged(charge),
  });
  services = {
    config,
    store: options.store,
    videoTasks,
    authenticator: createAuthenticator(options.store, {
      cacheTtlMs: keyCacheTtl(config, options.store, options.changesHeard),
    }),
    catalog,
    providers,
    billing: createLedgerBilling(options.store, {
      instanceId: options.instanceId,
      clock: () => (services ?? { now: Date.now }).now(),
      onCharged: (charge) => budgets.charged(charge),
    }),
    budgets,
    quotas: options.redis
      ? createRedisQuotas({
          ...quotaDefaults(config.limits),
          redis: options.redis,
          onUnavailable: config.redis.on_unavailable,
          logger: options.logger,
        })
      : createMemoryQuotas(quotaDefaults(config.limits)),
    attempts: createAttemptLimiter({
      perAddress: {
        login: { limit: config.auth.login_attempts_per_minute, windowMs: 60_000 },
        register: { limit: config.auth.register_attempts_per_hour, windowMs: 3_600_000 },
        redeem: { limit: config.auth.redeem_attempts_per_minute, windowMs: 60_000 },
      },
      perEmail: {
        login: { limit: config.auth.login_attempts_per_email_per_minute, windowMs: 60_000 },
        register: { limit: config.auth.register_attempts_per_email_per_hour, windowMs: 3_600_000 },
        redeem: { limit: config.auth.redeem_attempts_per_account_per_minute, windowMs: 60_000 },
      },
      maxEntries: config.auth.attempt_tracking_max_entries,
    }),
    logger: options.logger,
    ...(metrics ? { metrics } : {}),
    ...(options.tracer ? { tracer: options.tracer } : {}),
    now: Date.now,
  };
  const live = services;
  const breaker = config.routing.circuit_breaker;
  live.routeHealth = createRouteHealth(
    {
      enabled: breaker.enabled,
      failureThreshold: breaker.failure_threshold,
      cooldownMs: breaker.cooldown_seconds * 1000,
      maxCooldownMs: Math.max(breaker.cooldown_seconds, breaker.max_cooldown_seconds) * 1000,
    },
    () => live.now(),
  );
  if (metrics && breaker.enabled)
    metrics.addCollectedGauge(
      circuitStateGauge(live.routeHealth, () => catalogRoutes(live.catalog.list())),
    );
  return services;
}

export async function startGateway(options: StartOptions = {}): Promise<RunningGateway> {
  const env = options.env ?? process.env;
  const config = options.config ?? loadConfig({ env });
  const logger = options.logger ?? createLogger(config.log_level);
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));

  const data = loadCatalogFor(config);
  const startedFromFile = existsSync(configFilePath(env));
  // Everything opened is closed again if a later step fails (a port in use, a bad admin key).
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  let started: Pick<RunningGateway, "app" | "services" | "sandboxUrl"> & { lifecycle: Lifecycle };
  // Other instances' changes (ops/change-feed.ts); the handler is set once the reloader exists.
  const changes = {
    feed: silentChangeFeed(),
    local: undefined as Authenticator | undefined,
    onEvent: (_event: ChangeEvent): void => {},
  };
  let url: string;
  let metricsUrl: string | undefined;
  let bootstrapKey: string | undefined;
  try {
    // On SQLite the holds live in this process: the command line checks who serves the file,
    // and so does a second gateway, whose start-up recovery would settle this one's requests.
    const database = describeDatabaseUrl(config.database_url);
    if (database.dialect === "sqlite") refuseServedSqliteFile(database.location);
    const sandbox = await startSandboxIfNeeded(config, data, env, logger);
    if (sandbox) cleanups.push(sandbox.close);
    const store = await openGatewayStore(config, logger, options.stop);
    cleanups.push(() => store.close());
    if (database.dialect === "sqlite") {
      const release = claimSqliteFile(database.location);
      cleanups.push(async () => release());
    }
    const instanceId = config.billing.instance_id ?? `ins_${randomBase62(16)}`;
    const redis = await openRedis(config, logger);
    if (redis) cleanups.push(() => redis.close());
    // Shut down after the server has closed (cleanups run in reverse): the last spans go out.
    const tracing = await startTracing(config, options.spanExporter);
    if (tracing) cleanups.push(tracing.shutdown);
    const services = await buildServices(config, {
      env,
      logger,
      sandboxUrl: sandbox?.url,
      data,
      store,
      instanceId,
      redis,
      changesHeard: () => changes.feed.live,
      tracer: tracing?.tracer,
    });
    cleanups.push(async () => (services.quotas as { stop?: () => void }).stop?.());
    // Events from other instances go to the local cache only: passing them to the publishing
    // wrapper would send them back out, and instances would echo them to each other forever.
    changes.local = services.authenticator;
    services.authenticator = publishingInvalidations(services.authenticator, () => changes.feed);
    if (redis) {
      changes.feed = await redisChangeFeed(redis, {
        instanceId,
        logger,
        onEvent: (event) => changes.onEvent(event),
      });
    }
    cleanups.push(() => services.providers.close());
    cleanups.push(() => services.videoTasks.close());
    cleanups.push(async () => services.budgets?.stop());
    // Load the tokenizer before listening: building it blocks the event loop for about a second.
    await warmTokenizer();
    const recovery = await startInflightRecovery(store, {
      singleProcess: store.dialect === "sqlite",
      instanceId,
      stableInstanceId: config.billing.instance_id !== undefined,
      instanceTimeoutMs: config.billing.instance_timeout_seconds * 1000,
      staleHoldMs: config.billing.stale_hold_seconds * 1000,
      retryUnwritten: (retry) => services.billing.retryUnwritten(retry),
      logger,
    });
    cleanups.push(() => recovery.stop());

    const lifecycle: Lifecycle = { draining: false };
    const app = buildApp(services, lifecycle);
    cleanups.push(() => app.close());
    await app
      .listen({ host: config.server.host, port: config.server.port })
      .catch((error: unknown) => {
        throw describeListenError(error, config.server.host, config.server.port);
      });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.server.port;
    url = config.server.public_url ?? `http://${config.server.host}:${port}`;
    if (config.metrics.listen && services.metrics) {
      const address = config.metrics.listen;
      const listener = await startMetricsListener(address, services.metrics, (error) =>
        logger.error({ err: error }, "metrics collection failed"),
      ).catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ListenError(
          `Cannot listen for metrics on ${address} (metrics.listen): ${reason}`,
          {
            cause: error,
          },
        );
      });
      cleanups.push(listener.close);
      metricsUrl = `${listener.url}/metrics`;
    }
    // Only once the server listens, so a failed first start never hides the first key.
    bootstrapKey = await bootstrapAdmin(
      store,
      env.SWITCHYARD_ADMIN_KEY,
      config.billing.bootstrap_credit_micros,
    );
    started = { app, services, sandboxUrl: sandbox?.url, lifecycle };
  } catch (error) {
    await cleanUp();
    throw error;
  }
  const { app, services, lifecycle } = started;
  const store = services.store as Store & { dialect: string };

  print(`Switchyard listening on ${url}`);
  print(
    `  ${services.catalog.list().length} models; database ${store.dialect}; ${started.sandboxUrl ? `sandbox ${started.sandboxUrl}` : "no sandbox"}`,
  );
  if (metricsUrl) print(`  metrics (no token) on ${metricsUrl}`);
  if (config.tracing.endpoint) print(`  traces (OTLP/HTTP) to ${config.tracing.endpoint}`);
  for (const line of routingBanner(services.catalog)) print(line);
  if (bootstrapKey) {
    print("First start: created the admin account admin@localhost. Its API key (shown once):");
    print(bootstrapKey);
    print(`Try: curl ${url}/v1/models -H "Authorization: Bearer ${bootstrapKey}"`);
  }

  let closing: Promise<void> | undefined;
  let endDrainDelay = () => {};
  const close = (closeOptions: { drainDelaySeconds?: number } = {}) => {
    closing ??= (async () => {
      lifecycle.draining = true;
      // The listener stays open (and `/readyz` answers 503) until load balancers notice.
      const delayMs = (closeOptions.drainDelaySeconds ?? 0) * 1000;
      if (delayMs > 0) {
        logger.info({ drainDelaySeconds: delayMs / 1000 }, "draining: readyz answers 503");
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          endDrainDelay = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const grace = setTimeout(
        () => app.server.closeAllConnections(),
        config.server.shutdown_grace_seconds * 1000,
      );
      grace.unref();
      // A keep-alive connection whose request finishes during the drain goes idle and would
      // stay open until the grace period ends: close such connections as they go idle.
      const idle = setInterval(() => app.server.closeIdleConnections(), 250);
      idle.unref();
      try {
        await cleanUp(); // closes the server first (draining), then the pool, database and sandbox
      } finally {
        clearTimeout(grace);
        clearInterval(idle);
      }
    })();
    return closing;
  };
  const reloader = createReloader({
    services,
    catalogData: data,
    // A file the gateway started from that is gone is a reload that fails, not all defaults.
    readConfig: () => loadConfig({ env, requireFile: startedFromFile }),
    loadCatalog: loadCatalogFor,
    buildCatalog: reloadCatalogBuilder(env, started.sandboxUrl, logger),
    loggers: [logger, app.log as unknown as Logger],
  });
  changes.onEvent = applyChange({
    authenticator: changes.local ?? services.authenticator,
    reload: () => {
      if (!closing) reloader.reload();
    },
  });
  const reload = () => {
    if (closing) return undefined;
    const outcome = reloader.reload({ actor: { type: "signal" }, reason: "SIGHUP" });
    if (outcome) changes.feed.publish({ type: "reload" });
    return outcome;
  };
  if (!config.redis.url && store.dialect !== "sqlite") {
    // Several instances and no Redis to tell them: each one watches its configuration file.
    const stop = watchConfigFile(configFilePath(env), () =>
      reloader.reload({ actor: { type: "system" }, reason: "configuration file changed" }),
    );
    cleanups.push(async () => stop());
  }
  return {
    url,
    app,
    services,
    sandboxUrl: started.sandboxUrl,
    bootstrapKey,
    close,
    skipDrainDelay: () => endDrainDelay(),
    reload,
  };
}
