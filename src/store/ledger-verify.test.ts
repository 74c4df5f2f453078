/**
 * Balance limits and `verify` on both databases: a credit above the maximum or a debit below
 * what is held changes nothing, and `verify` reports negative balances, charges above their
 * hold and amounts past 2^53 (even sums that overflow SQLite's integers) instead of failing.
 * Damage is done with raw SQL through a second connection, as a bug or a hand edit would.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL, postgresReachable } from "../../test/support/postgres.ts";
import { BalanceOutOfRange, openStore, type Store } from "./index.ts";

interface Backend {
  store: Store;
  /** Runs SQL on a second connection; `?` placeholders. */
  raw(text: string, values?: unknown[]): Promise<void>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const file = join(mkdtempSync(join(tmpdir(), "switchyard-verify-")), "ledger.sqlite");
  const store = await openStore(file);
  const second = new SQLite(file);
  return {
    store,
    async raw(text, values = []) {
      second.prepare(text).run(...values);
    },
    async close() {
      second.close();
      await store.close();
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const schema = `switchyard_verify_${process.pid}_${Date.now()}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.query(`set search_path = ${schema}`);
  const store = await openStore(
    `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
  );
  return {
    store,
    async raw(text, values = []) {
      let index = 0;
      await client.query(
        text.replace(/\?/g, () => `$${++index}`),
        values,
      );
    },
    async close() {
      await store.close();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

function suite(name: string, open: () => Promise<Backend>) {
  describe(`ledger limits and verify on ${name}`, () => {
    let backend: Backend;
    let store: Store;
    beforeAll(async () => {
      backend = await open();
      store = backend.store;
    });
    afterAll(() => backend?.close());

    async function account(balance: number): Promise<string> {
      const { id } = await store.createAccount({
        email: `${Math.random()}@example.com`,
        passwordHash: null,
        role: "user",
      });
      if (balance) await store.adjustBalance({ accountId: id, amountMicros: balance, reason: "t" });
      return id;
    }

    const kinds = async (accountId: string) =>
      (await store.verify()).problems
        .filter((problem) => problem.accountId === accountId)
        .map((problem) => problem.kind)
        .sort();

    it("refuses a credit above the maximum and a debit below what is held, changing nothing", async () => {
      const id = await account(900);
      const refused = await store
        .adjustBalance({ accountId: id, amountMicros: 101, reason: "t", maxBalanceMicros: 1_000 })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BalanceOutOfRange);
      expect(refused).toMatchObject({ reason: "above_maximum", balanceMicros: 900 });
      await store.adjustBalance({
        accountId: id,
        amountMicros: 100,
        reason: "t",
        maxBalanceMicros: 1_000,
      });

      await store.placeHold({
        requestId: `${id}-hold`,
        accountId: id,
        keyId: "k",
        model: "m",
        endpoint: "/v1/chat/completions",
        instanceId: "test",
        floorMicros: 0,
        amountMicros: 600,
      });
      const below = await store
        .adjustBalance({ accountId: id, amountMicros: -401, reason: "t" })
        .catch((error: unknown) => error);
      expect(below).toMatchObject({ reason: "below_held", balanceMicros: 1_000, heldMicros: 600 });
      const taken = await store.adjustBalance({ accountId: id, amountMicros: -400, reason: "t" });
      expect(taken.balanceMicros).toBe(600);
      const moves = (await store.listEntries(id, { limit: 10 })).filter(
        (entry) => entry.kind === "credit" || entry.kind === "debit",
      );
      expect(moves.map((entry) => entry.amountMicros)).toEqual([-400, 100, 900]);
      expect(await kinds(id)).toEqual([]);
    });

    it("reports a negative balance and a balance that differs from its ledger", async () => {
      const id = await account(500);
      await backend.raw("update accounts set balance_micros = ? where id = ?", [-7, id]);
      expect(await kinds(id)).toEqual(["balance_mismatch", "negative_balance"]);
    });

    it("reports a charge above its hold", async () => {
      const id = await account(1_000);
      await backend.raw(
        "insert into usage_records (request_id, account_id, model, endpoint, status, cost_micros, held_micros, created_at) values (?, ?, 'm', '/v1/chat/completions', 'succeeded', 700, 100, 0)",
        [`req_${id}`, id],
      );
      // Its spend day row, as the store writes it with the record.
      await backend.raw(
        "insert into spend_by_day (owner_id, day, spent_micros) values (?, 0, 700)",
        [id],
      );
      const report = await store.verify();
      const found = report.problems.filter((problem) => problem.accountId === id);
      expect(found).toEqual([
        {
          kind: "charge_above_hold",
          accountId: id,
          detail: expect.stringContaining("charged 700 against a hold of 100"),
        },
      ]);
    });

    it("reports amounts past 2^53, and sums that overflow, instead of failing", async () => {
      const id = await account(1);
      for (let i = 0; i < 3; i += 1) {
        await backend.raw(
          "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, created_at) values (?, ?, 'credit', 4000000000000000000, 0, 0)",
          [`led_big_${i}_${id}`, id],
        );
      }
      await backend.raw("update accounts set balance_micros = 9223372036854775807 where id = ?", [
        id,
      ]);
      const report = await store.verify();
      expect(report.problems.filter((problem) => problem.accountId === id)).toEqual([
        { kind: "out_of_range", accountId: id, detail: expect.stringContaining("2^53") },
      ]);
      // The other accounts are still checked.
      expect(report.accounts).toBeGreaterThanOrEqual(4);
    });
  });
}

suite("SQLite", sqliteBackend);
describe.skipIf(!(await postgresReachable()))("PostgreSQL (when reachable)", () => {
  suite("PostgreSQL", postgresBackend);
});
