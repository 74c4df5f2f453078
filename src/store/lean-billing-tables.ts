/**
 * @module store/lean-billing-tables
 * Migration 0004, SQLite only: every settlement writes one page per B-tree it touches, and each
 * page is a WAL frame of the commit. The ledger loses AUTOINCREMENT (it is append-only, so
 * rowids never repeat; the counter table was one more page) and the unique index on `id` (ids
 * are time + 71 random bits, unique by construction); usage records become WITHOUT ROWID, so the
 * table and its primary key are one B-tree. 10 pages per settlement become 7.
 */
import { type Kysely, type Migration, sql } from "kysely";

const USAGE_COLUMNS = `request_id text primary key, account_id text not null references accounts(id),
  key_id text, model text not null, endpoint text not null, status text not null,
  input_tokens bigint not null default 0, cached_input_tokens bigint not null default 0,
  cache_write_tokens bigint not null default 0, output_tokens bigint not null default 0,
  reasoning_tokens bigint not null default 0, images integer not null default 0,
  video_seconds integer not null default 0, characters bigint not null default 0,
  cost_micros bigint not null default 0, held_micros bigint not null default 0,
  usage_source text, upstream_request_id text, latency_ms integer, ttfb_ms integer,
  breakdown text, created_at bigint not null`;

const LEAN_SQLITE_TABLES = [
  `create table ledger_entries_lean (seq integer primary key, id text not null,
    account_id text not null references accounts(id), kind text not null,
    amount_micros bigint not null, hold_micros bigint not null default 0, request_id text,
    key_id text, model text, breakdown text, reason text, created_at bigint not null)`,
  "insert into ledger_entries_lean select * from ledger_entries",
  "drop table ledger_entries",
  "alter table ledger_entries_lean rename to ledger_entries",
  "create index ledger_account on ledger_entries (account_id)",
  "create unique index ledger_request_kind on ledger_entries (request_id, kind)",
  `create table usage_records_lean (${USAGE_COLUMNS}) without rowid`,
  "insert into usage_records_lean select * from usage_records",
  "drop table usage_records",
  "alter table usage_records_lean rename to usage_records",
  "create index usage_account_time on usage_records (account_id, created_at)",
];

export function leanBillingTablesMigration(dialect: "sqlite" | "postgres"): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== "sqlite") return;
      for (const statement of LEAN_SQLITE_TABLES) await sql.raw(statement).execute(db);
    },
  };
}
