/**
 * @module store/connect
 * Opens the database named by `DATABASE_URL`: a SQLite file (the embedded default) or
 * PostgreSQL (`postgres://...`). Runs migrations before returning.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect } from "kysely";
import pg from "pg";
import { migrateToLatest, type SqlDialect } from "./migrations.ts";
import type { Database } from "./schema.ts";
import {
  kyselyTransactions,
  type PreparedStatements,
  sqliteTransactions,
  type TransactionRunner,
} from "./transactions.ts";

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: SqlDialect;
  /** Runs multi-statement transactions (see transactions.ts). */
  transactions: TransactionRunner;
  close(): Promise<void>;
}

export function describeDatabaseUrl(url: string): { dialect: SqlDialect; location: string } {
  if (/^postgres(ql)?:\/\//.test(url))
    return { dialect: "postgres", location: url.replace(/:[^:@/]*@/, ":***@") };
  return { dialect: "sqlite", location: url.replace(/^sqlite:(\/\/)?/, "") };
}

export async function openDatabase(url: string): Promise<DatabaseHandle> {
  const { dialect, location } = describeDatabaseUrl(url);
  let db: Kysely<Database>;
  let transactions: TransactionRunner;
  if (dialect === "postgres") {
    // int8 (bigint) columns hold micro-USD and milliseconds; both fit a JS number safely.
    pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) }),
    });
    transactions = kyselyTransactions(db);
  } else {
    if (location !== ":memory:") mkdirSync(dirname(location), { recursive: true });
    const sqlite = new SQLite(location);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("busy_timeout = 5000");
    sqlite.pragma("foreign_keys = ON");
    const cached = withStatementCache(sqlite);
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached }) });
    transactions = sqliteTransactions(sqlite, cached as unknown as PreparedStatements);
  }
  await migrateToLatest(db as unknown as Kysely<unknown>, dialect);
  return { db, dialect, transactions, close: () => db.destroy() };
}

/**
 * Kysely prepares every statement anew; preparing costs more than running these small
 * queries, so prepared statements are kept per SQL text (the set of distinct queries is small).
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (statements.size < 1_000) statements.set(text, statement);
      }
      return statement as unknown as ReturnType<SqliteDatabase["prepare"]>;
    },
  };
}
