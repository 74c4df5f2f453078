/**
 * @module store/billing-queries
 * The rows and statements the money paths share: the hot statements compiled once, a usage
 * record's and a closing ledger entry's rows, and the transaction-body steps that read a
 * request's ledger entries, what an account may still hold, and write a usage record with its
 * spend day rows. Used by the billing store (holds and settlement), the in-flight recovery, the
 * video tasks' billing and the release of stale holds.
 */
import { type CompiledQuery, type Insertable, type Kysely, sql } from "kysely";
import type { UsageRecord } from "./billing-types.ts";
import { storedText } from "./column-values.ts";
import type { HoldBook } from "./hold-book.ts";
import { newId } from "./ids.ts";
import { queryTemplate } from "./query-template.ts";
import type {
  Database,
  InflightRequestsTable,
  LedgerEntriesTable,
  UsageRecordsTable,
} from "./schema.ts";
import { recordSpendQuery } from "./spend-by-day.ts";
import type { TransactionSteps } from "./transactions.ts";

export function toRow(record: UsageRecord): UsageRecordsTable {
  return {
    request_id: record.requestId,
    account_id: record.accountId,
    key_id: record.keyId,
    model: record.model,
    endpoint: record.endpoint,
    status: record.status,
    input_tokens: record.inputTokens,
    cached_input_tokens: record.cachedInputTokens,
    cache_write_tokens: record.cacheWriteTokens,
    output_tokens: record.outputTokens,
    reasoning_tokens: record.reasoningTokens,
    images: record.images,
    video_seconds: record.videoSeconds,
    characters: record.characters,
    cost_micros: record.costMicros,
    held_micros: record.heldMicros,
    usage_source: record.usageSource,
    upstream_request_id: storedText(record.upstreamRequestId),
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    breakdown: record.breakdown ? JSON.stringify(record.breakdown) : null,
    created_at: record.createdAt,
    overrun_micros: record.overrunMicros ?? 0,
    output_cap_lowered_to: record.outputCapLoweredTo ?? null,
    end_user: storedText(record.endUser),
    metadata: record.metadata ? JSON.stringify(record.metadata) : null,
  };
}

export function* entriesFor(entries: Queries["entries"], requestId: string) {
  const rows = (yield entries({ requestId })) as Array<{
    id: string;
    kind: string;
    hold_micros: number;
  }>;
  const closing = rows.find((row) => row.kind === "charge" || row.kind === "release");
  return {
    held: rows
      .filter((row) => row.kind === "hold")
      .reduce((sum, row) => sum + Number(row.hold_micros), 0),
    closed: closing !== undefined,
    /** The id of the closing ledger row, when the request is closed. */
    closedBy: closing?.id,
  };
}

/**
 * Writes a usage record and, when it charged something, adds the charge to the day rows of its
 * account and key tree (spend-by-day.ts) in the same transaction. Every usage record is written
 * here.
 */
export function* insertUsage(
  q: Queries,
  row: UsageRecordsTable,
): Generator<CompiledQuery, void, Record<string, unknown>[]> {
  yield q.insertUsageRow(row);
  if (row.cost_micros > 0)
    yield q.recordSpend({
      accountId: row.account_id,
      keyId: row.key_id,
      at: row.created_at,
      costMicros: row.cost_micros,
    });
}

/** The hot statements, compiled once (see query-template.ts). */
export function hotQueries(db: Kysely<Database>) {
  return {
    entries: queryTemplate((args: { requestId: string }) =>
      db
        .selectFrom("ledger_entries")
        .select(["id", "kind", "hold_micros"])
        .where("request_id", "=", args.requestId),
    ),
    reserve: queryTemplate((args: { accountId: string; amount: number }) =>
      db
        .updateTable("accounts")
        .set({ held_micros: sql`held_micros + ${args.amount}` })
        .where("id", "=", args.accountId)
        .where(sql<boolean>`balance_micros - held_micros >= ${args.amount}`)
        .returning("id"),
    ),
    available: queryTemplate((args: { accountId: string }) =>
      db
        .selectFrom("accounts")
        .select(["balance_micros", "held_micros"])
        .where("id", "=", args.accountId),
    ),
    insertLedger: queryTemplate((row: Insertable<LedgerEntriesTable>) =>
      db.insertInto("ledger_entries").values(row),
    ),
    charge: queryTemplate((args: { accountId: string; cost: number; held: number }) =>
      db
        .updateTable("accounts")
        .set({
          balance_micros: sql`balance_micros - ${args.cost}`,
          held_micros: sql`held_micros - ${args.held}`,
        })
        .where("id", "=", args.accountId),
    ),
    insertUsageRow: queryTemplate((row: UsageRecordsTable) =>
      db.insertInto("usage_records").values(row),
    ),
    recordSpend: recordSpendQuery(db),
    deliverInflight: queryTemplate((p: { requestId: string; floor: number }) =>
      db
        .updateTable("inflight_requests")
        .set({
          floor_micros: sql`case when ${p.floor} < hold_micros then ${p.floor} else hold_micros end`,
        })
        .where("request_id", "=", p.requestId),
    ),
    insertInflight: queryTemplate((row: InflightRequestsTable) =>
      db.insertInto("inflight_requests").values(row),
    ),
    deleteInflight: queryTemplate((args: { requestId: string }) =>
      db.deleteFrom("inflight_requests").where("request_id", "=", args.requestId),
    ),
  };
}
export type Queries = ReturnType<typeof hotQueries>;

/**
 * What `accountId` may still hold: its balance less the holds in the table and, for a database
 * only this process writes, the holds in memory (but the one of `exceptRequestId`). Read inside
 * a transaction body.
 */
export function* availableFor(
  q: Queries,
  accountId: string,
  book: HoldBook | undefined,
  exceptRequestId?: string,
): TransactionSteps<number> {
  const [account] = (yield q.available({ accountId })) as Array<{
    balance_micros: number;
    held_micros: number;
  }>;
  if (!account) return 0;
  return (
    Number(account.balance_micros) -
    Number(account.held_micros) -
    (book?.heldFor(accountId, exceptRequestId) ?? 0)
  );
}

export function ledgerRow(
  record: UsageRecord,
  kind: "charge" | "release",
  amount: number,
  hold: number,
  reason: string | null,
) {
  return {
    id: record.closingId ?? newId("led"),
    account_id: record.accountId,
    kind,
    amount_micros: amount,
    hold_micros: hold,
    request_id: record.requestId,
    key_id: record.keyId,
    model: record.model,
    breakdown: record.breakdown ? JSON.stringify(record.breakdown) : null,
    reason,
    created_at: Date.now(),
  };
}
