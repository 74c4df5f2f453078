/**
 * @module store/connect
 * Opens the database named by `DATABASE_URL`: a SQLite file (the embedded default) or
 * PostgreSQL (`postgres://...`). Runs migrations before returning.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { migrateToLatest, type SqlDialect } from "./migrations.ts";
import type { Database } from "./schema.ts";

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: SqlDialect;
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
  if (dialect === "postgres") {
    // int8 (bigint) columns hold micro-USD and milliseconds; both fit a JS number safely.
    pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) }),
    });
  } else {
    if (location !== ":memory:") mkdirSync(dirname(location), { recursive: true });
    const sqlite = new SQLite(location);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("busy_timeout = 5000");
    sqlite.pragma("foreign_keys = ON");
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  }
  await migrateToLatest(db as unknown as Kysely<unknown>, dialect);
  return { db, dialect, close: () => db.destroy() };
}
