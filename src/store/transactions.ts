/**
 * @module store/transactions
 * One way to run a transaction on either database. A transaction body is a generator that
 * yields compiled Kysely queries and receives their rows, so the SQL is written once:
 * - PostgreSQL: the body runs in a Kysely transaction, awaiting each query.
 * - SQLite: the body runs synchronously with cached prepared statements, so no other work can
 *   interleave and nothing waits on a connection lock across event-loop turns. Bodies that
 *   arrive in the same event-loop turn are group-committed: one `BEGIN IMMEDIATE … COMMIT` for
 *   all of them, and every caller's promise settles only after that COMMIT. If any body throws,
 *   the batch rolls back and each body is run again in a transaction of its own, so only the
 *   failing one fails. Under load this turns one WAL commit per hold or charge into one per
 *   batch. A body with nothing to batch it with runs at once, since waiting a turn would only
 *   add latency: one whose caller says no other request is under way (`RunHint.alone`; the
 *   billing store knows from its holds), or one arriving after an idle spell (no flush for
 *   2 ms).
 */
import type SQLite from "better-sqlite3";
import type { CompiledQuery, Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** A transaction's steps: yields queries, receives each query's rows, returns its result. */
export type TransactionSteps<T> = Generator<CompiledQuery, T, Record<string, unknown>[]>;

/**
 * Starts a transaction's steps. On a hot path, an arrow that calls a generator function made
 * once (per module or per store), not a generator function made per call: V8 gives each
 * generator function it creates a map of its own in the old generation, which keeps the
 * function and all it closes over alive until the next full collection.
 */
export type TransactionBody<T> = () => TransactionSteps<T>;

/** What the caller knows about the work around its body. */
export interface RunHint {
  /**
   * No other request of this process is under way, so no body could join this one's batch:
   * run it at once (when nothing is queued) rather than a turn later.
   */
  alone?: boolean;
}

export interface TransactionRunner {
  run<T>(body: TransactionBody<T>, hint?: RunHint): Promise<T>;
  /** True when bodies run synchronously in this process (SQLite), one batch at a time. */
  readonly inProcess: boolean;
}

export function kyselyTransactions(db: Kysely<Database>): TransactionRunner {
  return {
    inProcess: false,
    run: (body) =>
      db.transaction().execute(async (trx) => {
        const steps = body();
        let rows: Record<string, unknown>[] = [];
        for (;;) {
          const step = steps.next(rows);
          if (step.done) return step.value;
          rows = (await trx.executeQuery<Record<string, unknown>>(step.value)).rows;
        }
      }),
  };
}

export interface PreparedStatements {
  prepare(sql: string): SQLite.Statement;
}

/** After this long without a flush the runner counts as idle (see `run`). */
const IDLE_MS = 2;

interface Pending {
  body: TransactionBody<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export function sqliteTransactions(
  sqlite: SQLite.Database,
  statements: PreparedStatements,
): TransactionRunner {
  const execute = (query: CompiledQuery): Record<string, unknown>[] => {
    const statement = statements.prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (statement.reader) return statement.all(parameters) as Record<string, unknown>[];
    statement.run(parameters);
    return [];
  };
  const runSteps = (body: TransactionBody<unknown>): unknown => {
    const steps = body();
    let rows: Record<string, unknown>[] = [];
    for (;;) {
      const step = steps.next(rows);
      if (step.done) return step.value;
      rows = execute(step.value);
    }
  };
  const runBatch = sqlite.transaction((batch: Pending[]) =>
    batch.map((pending) => runSteps(pending.body)),
  );
  const runAlone = sqlite.transaction(runSteps);

  let queue: Pending[] = [];
  let lastFlush = 0;
  const flush = () => {
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    let values: unknown[];
    try {
      values = runBatch.immediate(batch);
    } catch {
      // Something in the batch failed and the whole batch rolled back: run each body in its own
      // transaction so only the failing one fails.
      for (const pending of batch) {
        try {
          pending.resolve(runAlone.immediate(pending.body));
        } catch (error) {
          pending.reject(error);
        }
      }
      lastFlush = performance.now();
      return;
    }
    lastFlush = performance.now();
    values.forEach((value, index) => {
      batch[index]!.resolve(value);
    });
  };

  return {
    inProcess: true,
    run<T>(body: TransactionBody<T>, hint?: RunHint): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // An idle gateway has nothing to batch with: run at once rather than a turn later.
        const idle =
          queue.length === 0 && (hint?.alone === true || performance.now() - lastFlush > IDLE_MS);
        if (queue.length === 0 && !idle) setImmediate(flush);
        queue.push({ body, resolve: resolve as (value: unknown) => void, reject });
        if (idle) flush();
      });
    },
  };
}
