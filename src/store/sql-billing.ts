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
import type { Kysely } from "kysely";
import {
  availableFor,
  entriesFor,
  hotQueries,
  insertUsage,
  ledgerRow,
  toRow,
} from "./billing-queries.ts";
import type {
  BillingStore,
  HoldInput,
  HoldResult,
  SpendLimitRefusal,
  UsageRecord,
} from "./billing-types.ts";
import type { HoldBook } from "./hold-book.ts";
import { newId } from "./ids.ts";
import type { Database, InflightRequestsTable } from "./schema.ts";
import { checkSpendLimits } from "./spend-limits.ts";
import { sqlInflight } from "./sql-inflight.ts";
import { sqlUsageReads } from "./sql-usage.ts";
import { releaseOpenHolds } from "./stale-holds.ts";
import type { RunHint, TransactionRunner, TransactionSteps } from "./transactions.ts";

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

/**
 * Whether this request is the only one under way in the process: no other open hold than its
 * own (`own`: 1 once it holds, 0 before). Its transaction then has nothing to batch with.
 * Unknown (no hint) when holds are kept in the table.
 */
function aloneIn(holds: HoldBook | undefined, own: 0 | 1): RunHint | undefined {
  return holds ? { alone: holds.size <= own } : undefined;
}

/**
 * Ends a request's hold in memory once its closing is written. A closing the database refused
 * keeps it: the money stays promised until a later write of the closing (the billing service's
 * retry) succeeds, and that write still finds the hold and the in-flight row to delete.
 */
function dropHold(holds: HoldBook, requestId: string) {
  return <T>(written: T): T => {
    holds.remove(requestId);
    return written;
  };
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
  // The transaction bodies are made once per store and take the request's facts as arguments:
  // a generator function made per call gets a map of its own from V8, in the old generation,
  // that keeps the function and all it closes over alive until the next full collection
  // (docs/performance.md, "What a stream keeps past the young generation"). An arrow per call,
  // which only starts one of these, costs no such map.

  /**
   * A hold with its amount in memory: checked and placed inside one synchronous step of the
   * transaction runner, so no other hold of this process can come between the read and the
   * placement. A settlement waiting for its commit keeps its hold in the book until then, so
   * the balance read can only understate what is available. (Inside the runner's batch the read
   * shares the batch's locks; a read of its own per request costs more.)
   */
  function* placeInMemory(input: HoldInput, book: HoldBook) {
    const { requestId, accountId, amountMicros } = input;
    const availableMicros = yield* availableFor(q, accountId, book, requestId);
    if (availableMicros < amountMicros) return { placed: false as const, availableMicros };
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
  }

  function* placeInTable(input: HoldInput): TransactionSteps<HoldResult> {
    const { requestId, accountId, keyId, model, amountMicros } = input;
    const capped = yield* checkSpendLimits(
      db,
      { accountId, amountMicros, limits: input.spendLimits, lockAccount: !transactions.inProcess },
      undefined,
    );
    if (capped) return refusedByCap(capped);
    const updated = yield q.reserve({ accountId, amount: amountMicros });
    if (updated.length === 0)
      return {
        placed: false as const,
        availableMicros: yield* availableFor(q, accountId, undefined),
      };
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
  }

  function* insertInflight(row: InflightRequestsTable) {
    yield q.insertInflight(row);
  }

  function* deliverInflight(requestId: string, floorMicros: number) {
    yield q.deliverInflight({ requestId, floor: floorMicros });
  }

  function* settleSteps(record: UsageRecord, inMemory: number) {
    const { held, closed, closedBy } = yield* entriesFor(q.entries, record.requestId);
    if (closed) return { alreadySettled: true, ownClosing: closedBy === record.closingId };
    if (!holds || holds.recorded(record.requestId))
      yield q.deleteInflight({ requestId: record.requestId });
    yield q.insertLedger(ledgerRow(record, "charge", -record.costMicros, -held, null));
    yield q.charge({ accountId: record.accountId, cost: record.costMicros, held });
    yield* insertUsage(q, toRow({ ...record, heldMicros: held + inMemory }));
    return { alreadySettled: false, ownClosing: true };
  }

  function* releaseSteps(record: UsageRecord, reason: string, inMemory: number) {
    const { held, closed } = yield* entriesFor(q.entries, record.requestId);
    if (closed) return;
    if (!holds || holds.recorded(record.requestId))
      yield q.deleteInflight({ requestId: record.requestId });
    yield q.insertLedger(ledgerRow(record, "release", 0, -held, reason));
    if (held !== 0) yield q.charge({ accountId: record.accountId, cost: 0, held });
    yield* insertUsage(q, toRow({ ...record, heldMicros: held + inMemory, costMicros: 0 }));
  }

  return {
    placeHold(input) {
      if (holds) {
        const book = holds;
        return transactions
          .run(() => placeInMemory(input, book), aloneIn(book, 0))
          .catch((error: unknown) => {
            book.remove(input.requestId);
            throw error;
          });
      }
      return transactions.run(() => placeInTable(input));
    },

    recordInflight(requestId, floorMicros) {
      if (holds) {
        const row = holds.takeInflight(requestId);
        if (!row) return Promise.resolve();
        return transactions.run(() => insertInflight(row), aloneIn(holds, 1));
      }
      return transactions.run(() => deliverInflight(requestId, floorMicros));
    },

    settle(record) {
      const inMemory = holds?.amountOf(record.requestId) ?? 0;
      record.closingId ??= newId("led");
      const settled = transactions.run(() => settleSteps(record, inMemory), aloneIn(holds, 1));
      return holds ? settled.then(dropHold(holds, record.requestId)) : settled;
    },

    releaseHold(record, reason) {
      const inMemory = holds?.amountOf(record.requestId) ?? 0;
      const released = transactions.run(
        () => releaseSteps(record, reason, inMemory),
        aloneIn(holds, 1),
      );
      return holds ? released.then(dropHold(holds, record.requestId)) : released;
    },

    releaseOpenHolds: (createdBefore, reason) =>
      releaseOpenHolds(db, transactions, q, createdBefore, reason),

    ...sqlInflight(db, dialect, transactions, q, holds),

    ...sqlUsageReads(db, dialect),
  };
}
