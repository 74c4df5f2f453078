/**
 * @module store/lean-inflight
 * Migration 0014, SQLite only: the in-flight rows in one B-tree. A stream writes its row before
 * its first byte (a commit on the way to that byte) and deletes it in its settlement, and each
 * B-tree the row lives in is a page, so a WAL frame, of both commits. The table had three: its
 * rows, the index of its text primary key, and the index on `instance_id`. Rebuilt WITHOUT ROWID
 * (the primary key is the table) and without the instance index, which only PostgreSQL's
 * recovery reads (several instances, each settling the rows of dead ones); SQLite's recovery
 * settles every row at start-up (a single process writes the file). The table holds only the
 * requests under way, so its rows being of middling width costs nothing.
 */
import { type Kysely, type Migration, sql } from "kysely";

const INFLIGHT_COLUMNS = sql`request_id text primary key, account_id text not null,
  key_id text, model text not null, endpoint text not null, instance_id text not null,
  hold_micros bigint not null, floor_micros bigint not null default 0,
  checkpoint_micros bigint not null default 0, checkpoint_usage text,
  created_at bigint not null, updated_at bigint not null`;

export function leanInflightMigration(dialect: "sqlite" | "postgres"): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== "sqlite") return;
      await sql`create table inflight_requests_lean (${INFLIGHT_COLUMNS}) without rowid`.execute(
        db,
      );
      await sql`insert into inflight_requests_lean (request_id, account_id, key_id, model,
        endpoint, instance_id, hold_micros, floor_micros, checkpoint_micros, checkpoint_usage,
        created_at, updated_at)
        select request_id, account_id, key_id, model, endpoint, instance_id, hold_micros,
          floor_micros, checkpoint_micros, checkpoint_usage, created_at, updated_at
        from inflight_requests`.execute(db);
      await sql`drop table inflight_requests`.execute(db);
      await sql`alter table inflight_requests_lean rename to inflight_requests`.execute(db);
    },
  };
}
