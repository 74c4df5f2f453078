/**
 * @module store/sql-billing
 * Holds, settlement and usage records. Every movement is a ledger entry written in the same
 * transaction as the account's cached `balance_micros` / `held_micros`:
 * - hold: `hold_micros +H` (balance unchanged), placed only if `balance - held >= H`
 *   (one conditional UPDATE, so concurrent requests can never overdraw);
 * - charge: `amount -cost`, `hold_micros -H`; release: `hold_micros -H`.
 * The unique (request_id, kind) index makes settlement idempotent.
 * With a `HoldBook` (the embedded SQLite file, written by this process only) the hold's amount
 * lives in memory instead of the ledger and the account row.
 * On both, each request has an in-flight row from its hold to its settlement (written with the
 * hold, deleted with the charge or release), so a dead process's requests can be settled at
 * once after a restart (see sql-inflight.ts).
 */
import { type CompiledQuery, type Insertable, type Kysely, sql } from "kysely";
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
import { checkSpendLimits } from "./spend-limits.ts";
import { sqlInflight } from "./sql-inflight.ts";
import { sqlUsageReads } from "./sql-usage.ts";
import type { RunHint, TransactionRunner } from "./transactions.ts";
import type { BillingStore, HoldInput, SpendLimitRefusal, UsageRecord } from "./types.ts";

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
    upstream_request_id: record.upstreamRequestId,
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    breakdown: record.breakdown ? JSON.stringify(record.breakdown) : null,
    created_at: record.createdAt,
    overrun_micros: record.overrunMicros ?? 0,
    output_cap_lowered_to: record.outputCapLoweredTo ?? null,
    end_user: record.endUser ?? null,
    metadata: record.metadata ? JSON.stringify(record.metadata) : null,
  };
}

export function* entriesFor(entries: Queries["entries"], requestId: string) {
  const rows = (yield entries({ requestId })) as Array<{ kind: string; hold_micros: number }>;
  return {
    held: rows
      .filter((row) => row.kind === "hold")
      .reduce((sum, row) => sum + Number(row.hold_micros), 0),
    closed: rows.some((row) => row.kind === "charge" || row.kind === "release"),
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
        .select(["kind", "hold_micros"])
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
) {
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

/** The in-flight row of a hold; `floorMicros` is what a crash charges (0 until it delivers). */
function inflightRow(input: HoldInput, floorMicros: number): InflightRequestsTable {
  const now = Date.now();
  return {
    request_id: input.requestId,
    account_id: input.accountId,
    key_id: input.keyId,
    model: input.model,
    endpoint: input.endpoint,
    instance_id: input.instanceId,
    hold_micros: input.amountMicros,
    floor_micros: Math.min(floorMicros, input.amountMicros),
    checkpoint_micros: 0,
    checkpoint_usage: null,
    created_at: now,
    updated_at: now,
  };
}

export function ledgerRow(
  record: UsageRecord,
  kind: "charge" | "release",
  amount: number,
  hold: number,
  reason: string | null,
) {
  return {
    id: newId("led"),
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

/**
 * Whether this request is the only one under way in the process: no other open hold than its
 * own (`own`: 1 once it holds, 0 before). Its transaction then has nothing to batch with.
 * Unknown (no hint) when holds are kept in the table.
 */
function aloneIn(holds: HoldBook | undefined, own: 0 | 1): RunHint | undefined {
  return holds ? { alone: holds.size <= own } : undefined;
}

/** The refusal of a hold that a key's spend cap has no room for. */
export function refusedByCap(capped: SpendLimitRefusal) {
  return {
    placed: false as const,
    availableMicros: Math.max(0, capped.limitMicros - capped.spentMicros - capped.heldMicros),
    spendLimit: capped,
  };
}

export function sqlBillingStore(
  db: Kysely<Database>,
  dialect: "sqlite" | "postgres",
  transactions: TransactionRunner,
  holds?: HoldBook,
): BillingStore {
  const q = hotQueries(db);
  return {
    placeHold(input) {
      const { requestId, accountId, keyId, model, amountMicros } = input;
      if (holds) {
        // Checked and placed inside one synchronous step of the transaction runner, so no other
        // hold of this process can come between the read and the placement. A settlement
        // waiting for its commit keeps its hold in the book until then, so the balance read can
        // only understate what is available. (Inside the runner's batch the read shares the
        // batch's locks; a read of its own per request costs more.)
        const book = holds;
        return transactions
          .run(
            function* () {
              const availableMicros = yield* availableFor(q, accountId, book, requestId);
              if (availableMicros < amountMicros)
                return { placed: false as const, availableMicros };
              book.remove(requestId);
              const capped = yield* checkSpendLimits(
                db,
                { accountId, amountMicros, limits: input.spendLimits, lockAccount: false },
                book,
              );
              if (capped) return refusedByCap(capped);
              // The in-flight row waits until the request starts delivering (`recordInflight`).
              book.place(requestId, accountId, amountMicros, inflightRow(input, input.floorMicros));
              return { placed: true as const };
            },
            aloneIn(book, 0),
          )
          .catch((error: unknown) => {
            book.remove(requestId);
            throw error;
          });
      }
      return transactions.run(function* () {
        const capped = yield* checkSpendLimits(
          db,
          {
            accountId,
            amountMicros,
            limits: input.spendLimits,
            lockAccount: !transactions.inProcess,
          },
          undefined,
        );
        if (capped) return refusedByCap(capped);
        const updated = yield q.reserve({ accountId, amount: amountMicros });
        if (updated.length === 0) {
          const [account] = (yield q.available({ accountId })) as Array<{
            balance_micros: number;
            held_micros: number;
          }>;
          const availableMicros = account
            ? Number(account.balance_micros) - Number(account.held_micros)
            : 0;
          return { placed: false as const, availableMicros };
        }
        yield q.insertLedger({
          id: newId("led"),
          account_id: accountId,
          kind: "hold",
          amount_micros: 0,
          hold_micros: amountMicros,
          request_id: requestId,
          key_id: keyId,
          model,
          breakdown: null,
          reason: null,
          created_at: Date.now(),
        });
        // Charged nothing after a crash until it starts delivering (`recordInflight`).
        yield q.insertInflight(inflightRow(input, 0));
        return { placed: true as const };
      });
    },

    recordInflight(requestId, floorMicros) {
      if (holds) {
        const row = holds.takeInflight(requestId);
        if (!row) return Promise.resolve();
        return transactions.run(
          function* () {
            yield q.insertInflight(row);
          },
          aloneIn(holds, 1),
        );
      }
      return transactions.run(function* () {
        yield q.deliverInflight({ requestId, floor: floorMicros });
      });
    },

    settle(record) {
      const inMemory = holds?.amountOf(record.requestId) ?? 0;
      const settled = transactions.run(
        function* () {
          const { held, closed } = yield* entriesFor(q.entries, record.requestId);
          if (closed) return { alreadySettled: true };
          if (!holds || holds.recorded(record.requestId))
            yield q.deleteInflight({ requestId: record.requestId });
          yield q.insertLedger(ledgerRow(record, "charge", -record.costMicros, -held, null));
          yield q.charge({ accountId: record.accountId, cost: record.costMicros, held });
          yield* insertUsage(q, toRow({ ...record, heldMicros: held + inMemory }));
          return { alreadySettled: false };
        },
        aloneIn(holds, 1),
      );
      return holds ? settled.finally(() => holds.remove(record.requestId)) : settled;
    },

    releaseHold(record, reason) {
      const inMemory = holds?.amountOf(record.requestId) ?? 0;
      const released = transactions.run(
        function* () {
          const { held, closed } = yield* entriesFor(q.entries, record.requestId);
          if (closed) return;
          if (!holds || holds.recorded(record.requestId))
            yield q.deleteInflight({ requestId: record.requestId });
          yield q.insertLedger(ledgerRow(record, "release", 0, -held, reason));
          if (held !== 0) yield q.charge({ accountId: record.accountId, cost: 0, held });
          yield* insertUsage(q, toRow({ ...record, heldMicros: held + inMemory, costMicros: 0 }));
        },
        aloneIn(holds, 1),
      );
      return holds ? released.finally(() => holds.remove(record.requestId)) : released;
    },

    async releaseOpenHolds(createdBefore, reason) {
      const open = await db
        .selectFrom("ledger_entries as hold")
        .selectAll("hold")
        .where("hold.kind", "=", "hold")
        .where("hold.created_at", "<", createdBefore)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("ledger_entries as closing")
                .select("closing.id")
                .whereRef("closing.request_id", "=", "hold.request_id")
                .where("closing.kind", "in", ["charge", "release"]),
            ),
          ),
        )
        // A video task's hold lasts as long as the task, across restarts; the task settles it.
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("video_tasks as task")
                .select("task.id")
                .whereRef("task.id", "=", "hold.request_id"),
            ),
          ),
        )
        .execute();
      let released = 0;
      for (const hold of open) {
        const done = await transactions.run(function* () {
          const { closed } = yield* entriesFor(q.entries, hold.request_id ?? "");
          if (closed) return false;
          const { seq: _seq, ...entry } = hold;
          yield db
            .insertInto("ledger_entries")
            .values({
              ...entry,
              id: newId("led"),
              kind: "release",
              amount_micros: 0,
              hold_micros: -Number(hold.hold_micros),
              reason,
              created_at: Date.now(),
            })
            .compile();
          yield db
            .updateTable("accounts")
            .set({ held_micros: sql`held_micros - ${Number(hold.hold_micros)}` })
            .where("id", "=", hold.account_id)
            .compile();
          return true;
        });
        if (done) released += 1;
      }
      return released;
    },

    ...sqlInflight(db, transactions, q, holds),

    ...sqlUsageReads(db, dialect),
  };
}
