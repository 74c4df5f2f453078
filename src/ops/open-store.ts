/**
 * @module ops/open-store
 * Opens the store when the database is up, waiting for it with backoff for
 * `database_wait_seconds` (a database container that starts after the gateway, a restart in
 * progress). Only "cannot reach it" failures are waited out; a wrong password or a failed
 * migration stops at once. Giving up is one sentence naming the database and what to check.
 * The gateway's store then answers `store_unavailable` through an outage (store-availability.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { Config } from "../config/index.ts";
import {
  describeDatabaseUrl,
  isConnectionFailure,
  type OpenOptions,
  openStore,
} from "../store/index.ts";
import { watchStoreAvailability } from "./store-availability.ts";

export class DatabaseUnreachable extends Error {
  override name = "DatabaseUnreachable";
}

/** A stop signal came while start-up waited for the database: nothing was started. */
export class StoppedWhileWaiting extends Error {
  override name = "StoppedWhileWaiting";
}

export interface WaitOptions extends OpenOptions {
  /** How long to keep trying; 0 tries once. */
  waitSeconds: number;
  /** Told about each failed attempt; none for the CLI. */
  logger?: Logger;
  /** First pause between attempts (milliseconds); doubled each time up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Aborted by a stop signal: the wait ends at once with `StoppedWhileWaiting`. */
  stop?: AbortSignal;
}

/** The innermost reason: `connect ECONNREFUSED 127.0.0.1:5432`, not the wrappers around it. */
export function failureReason(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5; depth++) {
    const { cause, errors } = (current ?? {}) as { cause?: unknown; errors?: unknown };
    if (Array.isArray(errors) && errors.length > 0) {
      return [...new Set(errors.map((inner) => failureReason(inner)))].join("; ");
    }
    if (cause === undefined || cause === null) break;
    current = cause;
  }
  const { message, code } = (current ?? {}) as { message?: unknown; code?: unknown };
  return (typeof message === "string" && message) || String(code ?? current);
}

export async function openStoreWhenReachable(url: string, options: WaitOptions) {
  const startedAt = Date.now();
  let delayMs = options.firstDelayMs ?? 250;
  const where = describeDatabaseUrl(url).location;
  const stopped = () =>
    new StoppedWhileWaiting(
      `Stopped while waiting for the database ${where}: nothing was started.`,
    );
  for (let attempt = 1; ; attempt++) {
    if (options.stop?.aborted) throw stopped();
    try {
      const store = await openStore(url, options);
      if (attempt > 1) options.logger?.info({ database: where, attempt }, "database reachable");
      return store;
    } catch (error) {
      if (!isConnectionFailure(error)) throw error;
      const leftMs = options.waitSeconds * 1000 - (Date.now() - startedAt);
      if (leftMs <= 0) {
        const waited =
          options.waitSeconds > 0 ? ` within ${options.waitSeconds} s (database_wait_seconds)` : "";
        throw new DatabaseUnreachable(
          `Could not reach the database ${where}${waited}: ${failureReason(error)}. Check that it is running and that DATABASE_URL (database_url) names it.`,
          { cause: error },
        );
      }
      const pauseMs = Math.min(delayMs, leftMs);
      options.logger?.warn(
        { database: where, attempt, reason: failureReason(error), retryInMs: pauseMs },
        "database not reachable yet; waiting for it",
      );
      await sleep(pauseMs, undefined, { signal: options.stop }).catch(() => {
        throw stopped();
      });
      delayMs = Math.min(delayMs * 2, options.maxDelayMs ?? 5_000);
    }
  }
}

/** The running gateway's store: waited for at start-up, and an outage answered with 503s. */
export async function openGatewayStore(config: Config, logger: Logger, stop?: AbortSignal) {
  const store = await openStoreWhenReachable(config.database_url, {
    waitSeconds: config.database_wait_seconds,
    logger,
    ...(stop ? { stop } : {}),
    onConnectionError: (error) =>
      logger.warn({ reason: error.message }, "database connection lost; the pool replaces it"),
  });
  if (store.dialect !== "postgres") return store;
  return watchStoreAvailability(store, {
    onDown: (error) =>
      logger.error(
        { reason: failureReason(error) },
        "database unavailable: requests that need it answer 503 store_unavailable until it returns",
      ),
    onUp: () => logger.warn("database available again"),
  });
}
