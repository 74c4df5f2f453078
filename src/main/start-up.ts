/**
 * @module main/start-up
 * The composition root's start-up steps (`src/main.ts`): the process's logger, the sandbox when
 * it is to serve every vendor, the refusal of an SQLite file another gateway serves, the catalog
 * as the configuration routes it (at start-up and on a reload), and the database preparation of
 * `start --workers`. Part of the composition root: nothing else imports it.
 */
import pino, { type Logger } from "pino";
import { bootstrapAdmin } from "../bootstrap.ts";
import { Catalog, type CatalogData, loadCatalogData, sandboxServesAll } from "../catalog/index.ts";
import type { Config } from "../config/index.ts";
import { openGatewayStore } from "../ops/open-store.ts";
import { sqliteFileOwner } from "../store/index.ts";

export async function startSandboxIfNeeded(
  config: Config,
  data: CatalogData,
  env: Record<string, string | undefined>,
  logger: Logger,
) {
  // `auto` is the demo only while no credential is set; `always` simulates everything.
  if (!sandboxServesAll(data, env, config.sandbox.mode)) return undefined;
  if (config.sandbox.url)
    return { url: config.sandbox.url.replace(/\/$/, ""), close: async () => {} };
  // The sandbox is a separate server; only this composition root starts it, and only on demand.
  // It runs in a worker thread, so no request to it can stall this process's event loop.
  const { startSandboxIsolated } = await import("../sandbox/isolated.ts");
  const sandbox = await startSandboxIsolated({
    host: "127.0.0.1",
    port: 0,
    onWorkerExit: ({ exitCode, error, restarted }) =>
      logger.error({ exitCode, err: error, restarted }, "sandbox worker exited"),
  });
  return { url: sandbox.url, close: sandbox.close };
}

/**
 * Refuses to start on an SQLite file another live gateway serves: its start-up recovery would
 * settle that gateway's requests in flight and release their holds, and each process would hold
 * money the other cannot see.
 */
export function refuseServedSqliteFile(location: string): void {
  const owner = sqliteFileOwner(location);
  if (owner === undefined || owner === process.pid) return;
  throw new Error(
    `The SQLite database ${location} is served by a running gateway (pid ${owner}): one file serves one gateway. Stop it first (or, if no such gateway runs, remove ${location}.gateway).`,
  );
}

/** The catalog as `config` routes it; at start-up and on a reload. */
export function buildCatalog(
  config: Config,
  data: CatalogData,
  env: Record<string, string | undefined>,
  sandboxUrl: string | undefined,
): Catalog {
  return new Catalog(data, {
    env,
    sandboxUrl,
    sandboxMode: config.sandbox.mode,
    modelAliases: config.model_aliases,
    // Decided when the gateway started, which started the sandbox or not: a reload whose catalog
    // names a credential that happens to be set does not turn the demo into real routing (nor
    // the reverse); credentials and `sandbox.*` take a restart.
    sandboxServesAll: sandboxUrl !== undefined,
  });
}

export function loadCatalogFor(config: Config): CatalogData {
  return loadCatalogData({
    extraFiles: config.catalog.files,
    extraVendors: config.catalog.vendors,
    extraModels: config.catalog.models,
  });
}

/** The process's logger: JSON lines (on stdout unless told otherwise) with ISO 8601 times. */
export function createLogger(
  level: Config["log_level"],
  destination?: pino.DestinationStream,
): Logger {
  const options = { level, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The sandbox for workers to share (one video task store, one set of faults), when it is to
 * serve; started by the primary of `start --workers`.
 */
export function startSharedSandbox(
  config: Config,
  env: Record<string, string | undefined>,
  logger: Logger,
) {
  return startSandboxIfNeeded(config, loadCatalogFor(config), env, logger);
}

/**
 * Opens (and so migrates) the database and creates the first admin on an empty one, returning
 * its key; for a primary that starts workers, so they never race for it.
 */
export async function prepareDatabase(
  config: Config,
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<string | undefined> {
  const store = await openGatewayStore(config, logger);
  try {
    return await bootstrapAdmin(
      store,
      env.SWITCHYARD_ADMIN_KEY,
      config.billing.bootstrap_credit_micros,
    );
  } finally {
    await store.close();
  }
}

/**
 * The reload's catalog builder: the sandbox serves every route, or none, as it did when the
 * gateway started (a reload cannot start or stop it); a reloaded catalog whose credentials would
 * change that is logged, and routed as before.
 */
export function reloadCatalogBuilder(
  env: Record<string, string | undefined>,
  sandboxUrl: string | undefined,
  logger: Logger,
) {
  return (next: Config, nextData: CatalogData): Catalog => {
    const servesAll = sandboxUrl !== undefined;
    if (sandboxServesAll(nextData, env, next.sandbox.mode) !== servesAll)
      logger.warn(
        { sandboxServesAll: servesAll },
        "the reloaded catalog's credentials would change whether the sandbox serves every route; that takes a restart, until which it stays as it was",
      );
    return buildCatalog(next, nextData, env, sandboxUrl);
  };
}
