/**
 * @module store/connect
 * Opens the database named by `DATABASE_URL`: a SQLite file (the embedded default) or
 * PostgreSQL (`postgres://...`). Runs migrations before returning. A PostgreSQL connection that
 * breaks (the server restarts, an operator terminates it) is reported to `onConnectionError` and
 * replaced by the pool on next use; it never takes the process down.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
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

export interface OpenOptions {
  /** Told about each PostgreSQL connection that broke (idle or in use); the pool replaces it. */
  onConnectionError?: (error: Error) => void;
  /** How long opening one PostgreSQL connection may take (milliseconds). */
  connectTimeoutMs?: number;
}

/** `file:///abs/db.sqlite` → `/abs/db.sqlite`; `file:data/db.sqlite` → `data/db.sqlite`. */
function fromFileUrl(url: string): string {
  if (!url.startsWith("file://")) return url.slice("file:".length);
  try {
    return fileURLToPath(url);
  } catch {
    return url.slice("file://".length);
  }
}

export function describeDatabaseUrl(url: string): { dialect: SqlDialect; location: string } {
  if (/^postgres(ql)?:\/\//.test(url))
    return { dialect: "postgres", location: url.replace(/:[^:@/]*@/, ":***@") };
  if (url.startsWith("file:")) return { dialect: "sqlite", location: fromFileUrl(url) };
  return { dialect: "sqlite", location: url.replace(/^sqlite:(\/\/)?/, "") };
}

function postgresPool(url: string, options: OpenOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
  });
  // An idle connection's error reaches both listeners below: report it once.
  const reported = new WeakSet<Error>();
  const report = (error: Error) => {
    if (reported.has(error)) return;
    reported.add(error);
    options.onConnectionError?.(error);
  };
  // An idle connection that breaks is reported here; without a listener it would be thrown.
  pool.on("error", report);
  // A connection in use (between the statements of a transaction) reports on the client
  // itself; its query fails, and the pool drops it when it is released.
  pool.on("connect", (client) => client.on("error", report));
  return pool;
}

export async function openDatabase(
  url: string,
  options: OpenOptions = {},
): Promise<DatabaseHandle> {
  const { dialect, location } = describeDatabaseUrl(url);
  let db: Kysely<Database>;
  let transactions: TransactionRunner;
  if (dialect === "postgres") {
    // int8 (bigint) columns hold micro-USD and milliseconds; both fit a JS number safely.
    pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: postgresPool(url, options) }),
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
  try {
    await migrateToLatest(db as unknown as Kysely<unknown>, dialect);
  } catch (error) {
    // A database that is not up yet is tried again with a fresh pool; this one is closed.
    await db.destroy().catch(() => {});
    throw error;
  }
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
