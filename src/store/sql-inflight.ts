/**
 * @module store/sql-inflight
 * Crash recovery for billing: the in-flight rows of held requests (see sql-billing.ts), their
 * checkpoints, instance heartbeats, and the settlement of requests whose process died. A dead
 * request that had started delivering is charged the larger of its input (`floor_micros`, set
 * when delivery starts) and its last checkpoint, never more than its hold, and its usage record
 * says `interrupted`; one that had delivered nothing is charged nothing (`failed`). The rest of
 * the hold is released in the same transaction. Settlement is idempotent like every other one (the ledger's
 * unique `(request_id, kind)` index and the closed-request check).
 */
import { type Kysely, type Selectable, sql } from "kysely";
import { entriesFor, insertUsage, ledgerRow, type Queries, toRow } from "./billing-queries.ts";
import type {
  BillingStore,
  DeadRequestFilter,
  UsageCheckpoint,
  UsageRecord,
} from "./billing-types.ts";
import type { HoldBook } from "./hold-book.ts";
import type { Database, InflightRequestsTable } from "./schema.ts";
import type { TransactionRunner } from "./transactions.ts";

type CheckpointRecord = UsageCheckpoint["record"];

const EMPTY_COUNTS: CheckpointRecord = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  images: 0,
  videoSeconds: 0,
  characters: 0,
  breakdown: null,
};

function readCheckpoint(text: string | null): CheckpointRecord | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<CheckpointRecord>;
    return typeof parsed === "object" && parsed !== null
      ? { ...EMPTY_COUNTS, ...parsed }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The usage record and charge of a request whose process died. */
export function deadRequestRecord(
  row: Selectable<InflightRequestsTable>,
  now: number,
): UsageRecord {
  const hold = Number(row.hold_micros);
  const floor = Math.min(Number(row.floor_micros), hold);
  const checkpointCost = Math.min(Number(row.checkpoint_micros), hold);
  const checkpoint = checkpointCost >= floor ? readCheckpoint(row.checkpoint_usage) : undefined;
  const cost = Math.max(floor, checkpointCost);
  const counts = checkpoint ?? { ...EMPTY_COUNTS, breakdown: cost > 0 ? { input: cost } : null };
  return {
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    endpoint: row.endpoint,
    // Nothing delivered (it was waiting, or never began): a failed request, charged nothing.
    status: cost > 0 ? "interrupted" : "failed",
    ...counts,
    costMicros: cost,
    heldMicros: hold,
    usageSource: "estimated",
    upstreamRequestId: null,
    latencyMs: Math.max(0, now - Number(row.created_at)),
    ttfbMs: null,
    createdAt: now,
  };
}

/** The database's clock in Unix milliseconds, as SQL. */
function databaseNowMs(dialect: "sqlite" | "postgres") {
  return dialect === "postgres"
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
}

export function sqlInflight(
  db: Kysely<Database>,
  dialect: "sqlite" | "postgres",
  transactions: TransactionRunner,
  q: Queries,
  holds: HoldBook | undefined,
): Pick<BillingStore, "checkpoint" | "settleDeadRequests" | "heartbeat"> {
  const settleOne = (row: Selectable<InflightRequestsTable>) => {
    const settled = transactions.run(function* () {
      const record = deadRequestRecord(row, Date.now());
      yield q.deleteInflight({ requestId: row.request_id });
      const { held, closed } = yield* entriesFor(q.entries, row.request_id);
      if (closed) return false;
      yield q.insertLedger(
        ledgerRow(
          record,
          "charge",
          -record.costMicros,
          -held,
          "settled after the gateway restarted",
        ),
      );
      yield q.charge({ accountId: record.accountId, cost: record.costMicros, held });
      yield* insertUsage(q, toRow(record));
      return true;
    });
    // A hold this process keeps in memory ends with its settlement.
    return holds ? settled.finally(() => holds.remove(row.request_id)) : settled;
  };

  return {
    async checkpoint({ requestId, costMicros, record }) {
      const { numUpdatedRows } = await db
        .updateTable("inflight_requests")
        .set({
          checkpoint_micros: sql`case when ${costMicros} < hold_micros then ${costMicros} else hold_micros end`,
          checkpoint_usage: JSON.stringify(record),
          updated_at: Date.now(),
        })
        .where("request_id", "=", requestId)
        .executeTakeFirst();
      return numUpdatedRows > 0n;
    },

    async settleDeadRequests(filter: DeadRequestFilter) {
      let query = db.selectFrom("inflight_requests").selectAll();
      if (!filter.all) {
        const { instanceId, heartbeatOlderThanMs } = filter;
        query = query.where((eb) =>
          eb.or([
            ...(instanceId === undefined ? [] : [eb("instance_id", "=", instanceId)]),
            ...(heartbeatOlderThanMs === undefined
              ? []
              : [
                  eb(
                    "instance_id",
                    "not in",
                    eb
                      .selectFrom("instances")
                      .select("id")
                      .where(
                        "heartbeat_at",
                        ">=",
                        sql<number>`${databaseNowMs(dialect)} - ${heartbeatOlderThanMs}`,
                      ),
                  ),
                ]),
          ]),
        );
        if (instanceId === undefined && heartbeatOlderThanMs === undefined) return 0;
      }
      const rows = await query.execute();
      let settled = 0;
      for (const row of rows) if (await settleOne(row)) settled += 1;
      return settled;
    },

    async heartbeat(instanceId, startedAt) {
      // The database's clock, as the check above reads it: instances' own clocks may drift.
      const now = databaseNowMs(dialect);
      await db
        .insertInto("instances")
        .values({ id: instanceId, started_at: startedAt, heartbeat_at: now })
        .onConflict((conflict) => conflict.column("id").doUpdateSet({ heartbeat_at: now }))
        .execute();
    },
  };
}
