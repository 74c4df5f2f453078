/**
 * @module main
 * The composition root: reads configuration, starts the sandbox when some vendor has no
 * credential, opens the database, builds the concrete services, bootstraps the first admin, and
 * starts the HTTP server with a graceful SIGTERM drain. Nothing else builds concrete services.
 */
import type { FastifyInstance } from "fastify";
import pino, { type Logger } from "pino";
import { buildApp } from "./app.ts";
import { createAuthenticator } from "./auth/index.ts";
import { createLedgerBilling, warmTokenizer } from "./billing/index.ts";
import { bootstrapAdmin } from "./bootstrap.ts";
import { Catalog, type CatalogData, loadCatalogData } from "./catalog/index.ts";
import { type Config, loadConfig } from "./config/index.ts";
import type { Lifecycle } from "./endpoints/system/routes.ts";
import type { Services } from "./http/services.ts";
import { createMemoryQuotas } from "./limits/index.ts";
import { createHttpClient, createProviderRegistry } from "./providers/index.ts";
import { openStore, type Store } from "./store/index.ts";

export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  services: Services;
  sandboxUrl: string | undefined;
  /** The first admin key, when this start created it. */
  bootstrapKey: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  config?: Config;
  logger?: Logger;
  /** Where the start-up banner goes; defaults to stdout. */
  print?: (line: string) => void;
}

function vendorsWithoutCredential(
  data: CatalogData,
  env: Record<string, string | undefined>,
): string[] {
  return Object.entries(data.vendors)
    .filter(([, vendor]) => !env[vendor.credential_env])
    .map(([name]) => name);
}

async function startSandboxIfNeeded(
  config: Config,
  data: CatalogData,
  env: Record<string, string | undefined>,
) {
  if (config.sandbox.url)
    return { url: config.sandbox.url.replace(/\/$/, ""), close: async () => {} };
  if (config.sandbox.mode === "never") return undefined;
  if (config.sandbox.mode === "auto" && vendorsWithoutCredential(data, env).length === 0)
    return undefined;
  // The sandbox is a separate server; only this composition root starts it, and only on demand.
  const { startSandbox } = await import("./sandbox/server.ts");
  const sandbox = await startSandbox({ host: "127.0.0.1", port: 0 });
  return { url: sandbox.url, close: sandbox.close };
}

export async function buildServices(
  config: Config,
  options: {
    env: Record<string, string | undefined>;
    logger: Logger;
    sandboxUrl: string | undefined;
    data: CatalogData;
    store: Store;
  },
): Promise<Services> {
  const catalog = new Catalog(options.data, {
    env: options.env,
    sandboxUrl: options.sandboxUrl,
    sandboxMode: config.sandbox.mode,
    modelAliases: config.model_aliases,
  });
  const http = createHttpClient({
    connectMs: config.upstream.connect_timeout_ms,
    firstByteMs: config.upstream.first_byte_timeout_ms,
    idleMs: config.upstream.idle_timeout_ms,
  });
  return {
    config,
    store: options.store,
    authenticator: createAuthenticator(options.store, {
      cacheTtlMs: config.auth.key_cache_ttl_seconds * 1000,
    }),
    catalog,
    providers: createProviderRegistry(http),
    billing: createLedgerBilling(options.store),
    quotas: createMemoryQuotas({
      defaultRpm: config.limits.default_rpm,
      defaultConcurrency: config.limits.default_concurrency,
      leaseTtlMs: config.limits.lease_ttl_seconds * 1000,
    }),
    logger: options.logger,
    now: Date.now,
  };
}

/**
 * Releases holds a crashed process left behind. SQLite serves one process, so at start-up every
 * open hold is stale; PostgreSQL may be shared by live instances, so only holds older than
 * `billing.stale_hold_seconds` are released, at start-up and then periodically.
 */
async function releaseStaleHolds(
  store: Store & { dialect: string },
  config: Config,
  logger: Logger,
) {
  const maxAge = config.billing.stale_hold_seconds * 1000;
  const sweep = async (createdBefore: number) => {
    const released = await store.releaseOpenHolds(createdBefore, "stale hold released");
    if (released > 0) logger.warn({ released }, "released stale billing holds");
  };
  await sweep(store.dialect === "sqlite" ? Date.now() : Date.now() - maxAge);
  const timer = setInterval(
    () => {
      sweep(Date.now() - maxAge).catch((error: unknown) =>
        logger.error({ err: error }, "hold sweep failed"),
      );
    },
    Math.min(maxAge, 60_000),
  );
  timer.unref();
  return timer;
}

export async function startGateway(options: StartOptions = {}): Promise<RunningGateway> {
  const env = options.env ?? process.env;
  const config = options.config ?? loadConfig({ env });
  const logger = options.logger ?? pino({ level: config.log_level });
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));

  const data = loadCatalogData({
    extraFiles: config.catalog.files,
    extraVendors: config.catalog.vendors,
    extraModels: config.catalog.models,
  });
  // Everything opened is closed again if a later step fails (a port in use, a bad admin key).
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  let started: Omit<RunningGateway, "close" | "bootstrapKey" | "url"> & { lifecycle: Lifecycle };
  let url: string;
  let bootstrapKey: string | undefined;
  try {
    const sandbox = await startSandboxIfNeeded(config, data, env);
    if (sandbox) cleanups.push(sandbox.close);
    const store = await openStore(config.database_url);
    cleanups.push(() => store.close());
    const services = await buildServices(config, {
      env,
      logger,
      sandboxUrl: sandbox?.url,
      data,
      store,
    });
    cleanups.push(() => services.providers.close());
    // Load the tokenizer before listening: building it blocks the event loop for about a second.
    await warmTokenizer();
    const staleHolds = await releaseStaleHolds(store, config, logger);
    cleanups.push(async () => clearInterval(staleHolds));

    const lifecycle: Lifecycle = { draining: false };
    const app = buildApp(services, lifecycle);
    cleanups.push(() => app.close());
    await app.listen({ host: config.server.host, port: config.server.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.server.port;
    url = config.server.public_url ?? `http://${config.server.host}:${port}`;
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
  if (bootstrapKey) {
    print("First start: created the admin account admin@localhost. Its API key (shown once):");
    print(bootstrapKey);
    print(`Try: curl ${url}/v1/models -H "Authorization: Bearer ${bootstrapKey}"`);
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      lifecycle.draining = true;
      const grace = setTimeout(
        () => app.server.closeAllConnections(),
        config.server.shutdown_grace_seconds * 1000,
      );
      grace.unref();
      await cleanUp(); // closes the server first (draining), then the pool, database and sandbox
      clearTimeout(grace);
    })();
    return closing;
  };
  return { url, app, services, sandboxUrl: started.sandboxUrl, bootstrapKey, close };
}
