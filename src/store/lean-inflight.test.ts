import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateTo, migrateToLatest } from "./migrations.ts";

describe("migration 0014 (SQLite)", () => {
  it("keeps the rows under way and leaves the in-flight table one B-tree", async () => {
    const sqlite = new SQLite(
      join(mkdtempSync(join(tmpdir(), "switchyard-inflight-")), "m.sqlite"),
    );
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    await migrateTo(db, "sqlite", "0013_spend_by_day");
    const treesBefore = sqlite
      .prepare("select count(*) as n from sqlite_schema where tbl_name = 'inflight_requests'")
      .get() as { n: number };
    expect(treesBefore.n).toBe(3); // the table, its primary key's index, the instance index
    await sql`insert into inflight_requests (request_id, account_id, key_id, model, endpoint,
      instance_id, hold_micros, floor_micros, checkpoint_micros, checkpoint_usage, created_at,
      updated_at) values ('req_1', 'acc_1', 'key_1', 'gpt-4o-mini', '/v1/chat/completions',
      'inst_1', 900, 40, 120, '{"outputTokens":7}', 1000, 2000)`.execute(db);

    await migrateToLatest(db, "sqlite");

    const objects = sqlite
      .prepare("select type, name, sql from sqlite_schema where tbl_name = 'inflight_requests'")
      .all() as Array<{ type: string; name: string; sql: string }>;
    expect(objects.map(({ type, name }) => ({ type, name }))).toEqual([
      { type: "table", name: "inflight_requests" },
    ]);
    expect(objects[0]!.sql).toMatch(/without rowid/i);
    expect(sqlite.prepare("select * from inflight_requests").all()).toEqual([
      {
        request_id: "req_1",
        account_id: "acc_1",
        key_id: "key_1",
        model: "gpt-4o-mini",
        endpoint: "/v1/chat/completions",
        instance_id: "inst_1",
        hold_micros: 900,
        floor_micros: 40,
        checkpoint_micros: 120,
        checkpoint_usage: '{"outputTokens":7}',
        created_at: 1000,
        updated_at: 2000,
      },
    ]);
    // Still one row per request.
    expect(() =>
      sqlite
        .prepare(
          `insert into inflight_requests (request_id, account_id, model, endpoint, instance_id,
            hold_micros, created_at, updated_at) values ('req_1', 'a', 'm', 'e', 'i', 1, 1, 1)`,
        )
        .run(),
    ).toThrow(/UNIQUE|PRIMARY KEY/);
    await db.destroy();
  });
});
