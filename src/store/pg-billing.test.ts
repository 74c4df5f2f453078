/**
 * Migration 0015 (PostgreSQL only; skipped when no server answers): one closing ledger row per
 * request, and a clear refusal to start on a ledger where a request was already closed twice.
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresReachable, throwawaySchema } from "../../test/support/postgres.ts";
import { migrateTo, migrateToLatest } from "./migrations.ts";

const pgAvailable = await postgresReachable();

describe.skipIf(!pgAvailable)("migration 0015 (PostgreSQL)", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function ledgerBefore0015() {
    const schema = await throwawaySchema("switchyard_closing");
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: schema.url, max: 2 }) }),
    });
    cleanups.push(schema.drop, () => db.destroy());
    await migrateTo(db, "postgres", "0014_lean_sqlite_inflight");
    await sql`insert into accounts (id, email, role, balance_micros, held_micros, created_at)
      values ('acc_1', 'a@example.com', 'user', 1000, 0, 1)`.execute(db);
    const close = (id: string, request: string, kind: string) =>
      sql`insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros,
        request_id, created_at) values (${id}, 'acc_1', ${kind}, 0, -100, ${request}, 1)`.execute(
        db,
      );
    return { db, close };
  }

  it("allows one closing per request once applied", async () => {
    const { db, close } = await ledgerBefore0015();
    await close("led_1", "req_1", "charge");
    await migrateToLatest(db, "postgres");
    await expect(close("led_2", "req_1", "release")).rejects.toThrow(/ledger_request_closing/);
    await close("led_3", "req_2", "release");
  });

  it("refuses to apply over a request closed twice, naming it", async () => {
    const { db, close } = await ledgerBefore0015();
    await close("led_1", "req_twice", "charge");
    await close("led_2", "req_twice", "release");
    await expect(migrateToLatest(db, "postgres")).rejects.toThrow(
      /requests closed more than once in the ledger \(req_twice\).*ledger verify/,
    );
  });
});
