/**
 * @module billing/inflight-recovery
 * Settles what dead processes left in flight, at start-up and then periodically:
 * - a database only this process writes (SQLite): every in-flight request at start-up;
 * - a shared one (PostgreSQL): the requests of this instance id's previous run (a stable
 *   `billing.instance_id`), and those of any instance whose heartbeat has stopped for
 *   `billing.instance_timeout_seconds`, by the database's clock (instances' clocks may drift);
 *   this process heartbeats meanwhile, and writes again the settlements and releases of its own
 *   requests that the database refused while it was away.
 * On either, the closings the database refused (disk full, a lock, the database away) are
 * written again every few seconds while the process runs, and once more when it stops.
 * Holds without an in-flight row (from before in-flight rows existed) are still released by age
 * (`stale_hold_seconds`); a request under way is never released by age.
 */
import type { Logger } from "pino";
import type { BillingStore } from "../store/index.ts";

/** SQLite: how often the closings the database refused are tried again. */
const SQLITE_REWRITE_MS = 2_000;

export interface RecoveryOptions {
  /** True when no other process writes the database (SQLite). */
  singleProcess: boolean;
  instanceId: string;
  /** True when `instanceId` was configured (so a previous run may have used it). */
  stableInstanceId: boolean;
  instanceTimeoutMs: number;
  staleHoldMs: number;
  /** Writes again the closings the store refused (`BillingService.retryUnwritten`). */
  retryUnwritten?: (options?: { final?: boolean }) => Promise<number>;
  logger: Logger;
  now?: () => number;
}

export async function startInflightRecovery(
  store: BillingStore,
  options: RecoveryOptions,
): Promise<{ stop(): Promise<void> }> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const report = (settled: number, released: number) => {
    if (settled > 0)
      options.logger.warn({ settled }, "settled requests a stopped gateway left in flight");
    if (released > 0) options.logger.warn({ released }, "released stale billing holds");
  };
  const rewrite = async (final = false) => {
    const rewritten = (await options.retryUnwritten?.({ final })) ?? 0;
    if (rewritten > 0)
      options.logger.warn({ rewritten }, "wrote settlements the database refused earlier");
  };
  const sweep = async (first: boolean) => {
    if (!options.singleProcess) await store.heartbeat(options.instanceId, startedAt);
    await rewrite();
    const settled = await store.settleDeadRequests(
      options.singleProcess
        ? { all: true }
        : {
            ...(first && options.stableInstanceId ? { instanceId: options.instanceId } : {}),
            heartbeatOlderThanMs: options.instanceTimeoutMs,
          },
    );
    const released = await store.releaseOpenHolds(
      options.singleProcess ? now() : now() - options.staleHoldMs,
      "stale hold released",
    );
    report(settled, released);
  };
  await sweep(true);
  // SQLite: nothing else settles this process's requests, so only the refused closings are
  // written again; PostgreSQL: the whole sweep, for other instances' requests too.
  const timer = setInterval(
    () => {
      (options.singleProcess ? rewrite() : sweep(false)).catch((error: unknown) =>
        options.logger.error({ err: error }, "in-flight sweep failed"),
      );
    },
    options.singleProcess
      ? SQLITE_REWRITE_MS
      : Math.max(1_000, Math.floor(options.instanceTimeoutMs / 3)),
  );
  timer.unref();
  return {
    // At shutdown, after the last request: what is still refused is written once more, now,
    // before the database closes (a graceful stop must not leave a charge to the next start).
    async stop() {
      clearInterval(timer);
      await rewrite(true).catch((error: unknown) =>
        options.logger.error({ err: error }, "writing the refused settlements at shutdown failed"),
      );
    },
  };
}
