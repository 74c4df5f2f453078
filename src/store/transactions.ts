/**
 * @module store/transactions
 * One way to run a transaction on either database. A transaction body is a generator that
 * yields compiled Kysely queries and receives their rows, so the SQL is written once:
 * - PostgreSQL: the body runs in a Kysely transaction, awaiting each query.
 * - SQLite: the body runs synchronously with cached prepared statements, so no other work can
 *   interleave and nothing waits on a connection lock across event-loop turns. Bodies that
 *   arrive in the same event-loop turn are group-committed: one `BEGIN IMMEDIATE … COMMIT`, each
 *   body inside its own savepoint (so one failing body rolls back alone), and every caller's
 *   promise settles only after the shared COMMIT. Under load this turns one WAL commit per
 *   hold or charge into one per batch; a lone request waits at most one `setImmediate`.
 */
import type SQLite from "better-sqlite3";
import type { CompiledQuery, Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** Yields queries, receives each query's rows, returns the transaction's result. */
export type TransactionBody<T> = () => Generator<CompiledQuery, T, Record<string, unknown>[]>;

export interface TransactionRunner {
  run<T>(body: TransactionBody<T>): Promise<T>;
}

export function kyselyTransactions(db: Kysely<Database>): TransactionRunner {
  return {
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
  // Called inside the batch transaction, better-sqlite3 turns this into a SAVEPOINT.
  const runBody = sqlite.transaction((body: TransactionBody<unknown>) => {
    const steps = body();
    let rows: Record<string, unknown>[] = [];
    for (;;) {
      const step = steps.next(rows);
      if (step.done) return step.value;
      rows = execute(step.value);
    }
  });
  const runBatch = sqlite.transaction((batch: Pending[]) =>
    batch.map((pending) => {
      try {
        return { ok: true as const, value: runBody(pending.body) };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );

  let queue: Pending[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    try {
      const outcomes = runBatch.immediate(batch);
      outcomes.forEach((outcome, index) => {
        const pending = batch[index]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    } catch (error) {
      // The shared COMMIT failed: nothing in the batch was written.
      for (const pending of batch) pending.reject(error);
    }
  };

  return {
    run<T>(body: TransactionBody<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ body, resolve: resolve as (value: unknown) => void, reject });
      });
    },
  };
}
