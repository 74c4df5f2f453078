/**
 * The spend day rows (spend-by-day.ts) on SQLite and PostgreSQL: every charge lands in the rows
 * of its account, its key and each ancestor key, so a key's and an account's spend for any
 * period starting at a UTC midnight equals the sum of their usage records; a period that starts
 * elsewhere is still exact; and migration 0013 builds the same rows from existing records.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import fc from "fast-check";
import { Kysely, SqliteDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresReachable, throwawaySchema } from "../../test/support/postgres.ts";
import { chatUsageRecord } from "../../test/support/usage-record.ts";
import { openStore, type Store, type UsageRecord } from "./index.ts";
import { DAY_MS, spendByDayMigration } from "./spend-by-day.ts";

const pgAvailable = await postgresReachable();
const DAY1 = Date.UTC(2026, 10, 22);
const DAY2 = DAY1 + DAY_MS;

function usage(
  accountId: string,
  keyId: string | null,
  requestId: string,
  cost: number,
  at: number,
): UsageRecord {
  return chatUsageRecord({ requestId, accountId, keyId, costMicros: cost, createdAt: at });
}

interface Charge {
  key: 0 | 1 | 2 | 3; // 0: no key, 1: root, 2: child, 3: grandchild
  cost: number;
  at: number;
}

function suite(name: string, open: () => Promise<{ store: Store; cleanup(): Promise<void> }>) {
  describe(`spend day rows on ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, cleanup } = await open());
    });
    afterAll(async () => {
      await store.close();
      await cleanup();
    });

    async function tree() {
      const account = await store.createAccount({
        email: `${Math.random()}@example.com`,
        passwordHash: null,
        role: "user",
      });
      await store.adjustBalance({ accountId: account.id, amountMicros: 1e12, reason: "test" });
      const key = (parentKeyId: string | null) =>
        store.createKey({
          accountId: account.id,
          name: "k",
          keyHash: `${Math.random()}`,
          prefix: "sk-x",
          models: [],
          parentKeyId,
        });
      const root = await key(null);
      const child = await key(root.id);
      const grandchild = await key(child.id);
      return { accountId: account.id, keys: [null, root.id, child.id, grandchild.id] as const };
    }

    it("sums every charge into its account's and its key tree's rows, for any period start", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              key: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<Charge["key"]>,
              cost: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 })),
              at: fc.integer({ min: DAY1, max: DAY2 + DAY_MS - 1 }),
            }),
            { maxLength: 12 },
          ),
          fc.integer({ min: DAY1, max: DAY2 + DAY_MS }),
          async (charges, from) => {
            const { accountId, keys } = await tree();
            for (const [index, charge] of charges.entries()) {
              const requestId = `${accountId}-${index}`;
              await store.placeHold({
                requestId,
                accountId,
                keyId: keys[charge.key] ?? "k",
                model: "m",
                endpoint: "/v1/chat/completions",
                instanceId: "test",
                floorMicros: 0,
                amountMicros: 5_000,
              });
              const record = usage(accountId, keys[charge.key], requestId, charge.cost, charge.at);
              await (charge.cost > 0 ? store.settle(record) : store.releaseHold(record, "failed"));
            }
            // Each period start: a UTC midnight (day rows) and `from` itself (anywhere).
            for (const since of [0, DAY1, DAY2, from]) {
              const expected = (within: readonly Charge["key"][]) =>
                charges
                  .filter((charge) => within.includes(charge.key) && charge.at >= since)
                  .reduce((sum, charge) => sum + charge.cost, 0);
              expect(await store.accountSpend(accountId, since)).toBe(expected([0, 1, 2, 3]));
              const spent = async (key: string | null) =>
                (await store.keySpend(accountId, key ?? "", since)).spentMicros;
              expect(await spent(keys[1])).toBe(expected([1, 2, 3]));
              expect(await spent(keys[2])).toBe(expected([2, 3]));
              expect(await spent(keys[3])).toBe(expected([3]));
            }
          },
        ),
        { numRuns: 15 },
      );
    });
  });
}

suite("SQLite", async () => ({
  store: await openStore(join(mkdtempSync(join(tmpdir(), "switchyard-spend-")), "s.sqlite")),
  cleanup: async () => {},
}));

describe.skipIf(!pgAvailable)("PostgreSQL (skipped when no server answers)", () => {
  suite("PostgreSQL", async () => {
    const schema = await throwawaySchema("switchyard_spend");
    return { store: await openStore(schema.url), cleanup: schema.drop };
  });
});

describe("migration 0013", () => {
  it("builds the day rows of the usage records written before it", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "switchyard-spend-")), "m.sqlite");
    const store = await openStore(file);
    const account = await store.createAccount({
      email: "m@example.com",
      passwordHash: null,
      role: "user",
    });
    await store.adjustBalance({ accountId: account.id, amountMicros: 1e9, reason: "test" });
    const root = await store.createKey({
      accountId: account.id,
      name: "root",
      keyHash: "h1",
      prefix: "sk-1",
      models: [],
    });
    const child = await store.createKey({
      accountId: account.id,
      name: "child",
      keyHash: "h2",
      prefix: "sk-2",
      models: [],
      parentKeyId: root.id,
    });
    const charges: Array<[string | null, number, number]> = [
      [root.id, 100, DAY1 + 5],
      [child.id, 40, DAY1 + 7],
      [child.id, 2, DAY2 + 1],
      [null, 9, DAY2 + 2],
    ];
    for (const [index, [keyId, cost, at]] of charges.entries()) {
      const requestId = `m-${index}`;
      await store.placeHold({
        requestId,
        accountId: account.id,
        keyId: keyId ?? "k",
        model: "m",
        endpoint: "/v1/chat/completions",
        instanceId: "test",
        floorMicros: 0,
        amountMicros: 1_000,
      });
      await store.settle(usage(account.id, keyId, requestId, cost, at));
    }
    await store.close();

    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
    const rows = async () =>
      (
        await sql<{
          owner_id: string;
          day: number;
          spent_micros: number;
        }>`select owner_id, day, spent_micros from spend_by_day order by owner_id, day`.execute(db)
      ).rows;
    const written = await rows();
    const verifyWith = async () => {
      const reopened = await openStore(file);
      const { problems } = await reopened.verify();
      await reopened.close();
      return problems;
    };
    expect(await verifyWith()).toEqual([]);
    // A row that no longer matches its records is reported under the key's account.
    await sql`update spend_by_day set spent_micros = 41 where owner_id = ${child.id} and day = ${DAY1}`.execute(
      db,
    );
    expect(await verifyWith()).toEqual([
      {
        kind: "spend_rows_mismatch",
        accountId: account.id,
        detail: `${child.id} on 2026-11-22: spend row 41, usage records 40`,
      },
    ]);
    await sql`update spend_by_day set spent_micros = 40 where owner_id = ${child.id} and day = ${DAY1}`.execute(
      db,
    );
    expect(written).toEqual(
      [
        { owner_id: account.id, day: DAY1, spent_micros: 140 },
        { owner_id: account.id, day: DAY2, spent_micros: 11 },
        { owner_id: root.id, day: DAY1, spent_micros: 140 },
        { owner_id: root.id, day: DAY2, spent_micros: 2 },
        { owner_id: child.id, day: DAY1, spent_micros: 40 },
        { owner_id: child.id, day: DAY2, spent_micros: 2 },
        // SQLite orders text by its bytes, as `<` does (not as localeCompare would).
      ].sort((a, b) =>
        a.owner_id < b.owner_id ? -1 : a.owner_id > b.owner_id ? 1 : a.day - b.day,
      ),
    );
    // The same rows again from the records alone.
    await sql`drop table spend_by_day`.execute(db);
    await spendByDayMigration("sqlite").up(db);
    expect(await rows()).toEqual(written);
    await db.destroy();
  });
});
