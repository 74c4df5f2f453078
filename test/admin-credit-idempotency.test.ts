/**
 * Admin credits and debits under `Idempotency-Key` (docs/accounts.md, "Retries"), on SQLite and
 * PostgreSQL: a retried top-up moves the balance once, racing retries (on two instances of one
 * database, on PostgreSQL) make one entry, the same key with another body is refused, and the
 * key itself never shows in the account's ledger.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { freshDatabase } from "./support/cluster.ts";
import {
  createUser,
  requestsTo,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { postgresReachable } from "./support/postgres.ts";

const pgUp = await postgresReachable();

interface CreditAnswer {
  id: string;
  amount_micros: number;
  reason: string;
  balance_micros: number;
  created_at: string;
}

describe.each([
  { backend: "sqlite", available: true },
  { backend: "postgres", available: pgUp },
])("admin credits with an idempotency key ($backend)", ({ backend, available }) => {
  let gateway: TestGateway;
  /** A second instance on the same database (PostgreSQL only; SQLite here is in memory). */
  let other: (RunningGateway & { request: TestGateway["request"] }) | undefined;
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  beforeAll(async () => {
    if (!available) return;
    if (backend === "postgres") db = await freshDatabase();
    gateway = await startTestGateway(db ? { config: { database_url: db.url } } : {});
    if (db) {
      const second = await startGateway({
        env: {},
        print: () => {},
        config: loadConfig({
          env: {},
          cwd: mkdtempSync(join(tmpdir(), "switchyard-test-")),
          overrides: {
            database_url: db.url,
            log_level: "silent",
            server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
          },
        }),
      });
      other = { ...second, request: requestsTo(second.url) };
    }
  });
  afterAll(async () => {
    await other?.close();
    await gateway?.close();
    await db?.drop();
  });
  const credit = (
    accountId: string,
    amount: number,
    key: string | undefined,
    options: { reason?: string; via?: Pick<TestGateway, "request"> } = {},
  ) => {
    const via = options.via ?? gateway;
    return via.request(`/v1/admin/accounts/${accountId}/credit`, {
      key: gateway.adminKey,
      json: { amount_micros: amount, reason: options.reason ?? "invoice 1042" },
      ...(key === undefined ? {} : { headers: { "idempotency-key": key } }),
    });
  };
  const balanceOf = async (accountId: string) =>
    (await gateway.services.store.findAccountById(accountId))?.balanceMicros;
  const creditEntries = async (accountId: string) =>
    (await gateway.services.store.listEntries(accountId, { limit: 100 })).filter(
      (entry) => entry.kind === "credit" || entry.kind === "debit",
    );

  it.skipIf(!available)("a retry returns the first entry and moves nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000 });
    const first = await credit(user.accountId, 2_500, "invoice-1042");
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const entry = (await first.json()) as CreditAnswer;
    expect(entry.balance_micros).toBe(3_500);

    const retry = await credit(user.accountId, 2_500, "invoice-1042");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    const replayed = (await retry.json()) as CreditAnswer;
    expect(replayed).toMatchObject({
      id: entry.id,
      amount_micros: 2_500,
      reason: entry.reason,
      created_at: entry.created_at,
      balance_micros: 3_500,
    });
    expect(await balanceOf(user.accountId)).toBe(3_500);
    const entries = await creditEntries(user.accountId);
    expect(entries.filter((item) => item.amountMicros === 2_500)).toHaveLength(1);
    const audit = (await (
      await gateway.request(`/v1/admin/audit?target=${user.accountId}&action=account.credit`, {
        key: gateway.adminKey,
      })
    ).json()) as { data: Array<{ after: { amount_micros?: number } }> };
    expect(audit.data.filter((event) => event.after.amount_micros === 2_500)).toHaveLength(1);
    expect((await gateway.services.store.verify()).problems).toEqual([]);
  });

  it.skipIf(!available)("racing retries make one entry, on one instance or two", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    for (let round = 0; round < 3; round++) {
      // On PostgreSQL the account's row is held locked while the retries arrive, so they are
      // all under way at once (each past any check made before its update) when it is let go.
      const lock = db && new pg.Client({ connectionString: db.url });
      await lock?.connect();
      await lock?.query("BEGIN");
      await lock?.query("SELECT id FROM accounts WHERE id = $1 FOR UPDATE", [user.accountId]);
      const pending = Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          credit(user.accountId, 700, `top-up-race-${round}`, {
            ...(other && index % 2 === 1 ? { via: other } : {}),
          }),
        ),
      );
      if (lock) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await lock.query("COMMIT");
        await lock.end();
      }
      const answers = await pending;
      expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
      const ids = new Set(
        await Promise.all(
          answers.map(async (answer) => ((await answer.json()) as CreditAnswer).id),
        ),
      );
      expect(ids.size).toBe(1);
      expect(answers.filter((answer) => answer.headers.get("idempotent-replayed"))).toHaveLength(
        11,
      );
    }
    expect(await balanceOf(user.accountId)).toBe(3 * 700);
    expect(await creditEntries(user.accountId)).toHaveLength(3);
  });

  it.skipIf(!available)(
    "the same key with another amount or reason is a conflict; another account is another entry",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 0 });
      const neighbour = await createUser(gateway, { balanceMicros: 0 });
      expect((await credit(user.accountId, 100, "k-1")).status).toBe(200);
      for (const attempt of [
        await credit(user.accountId, 101, "k-1"),
        await credit(user.accountId, 100, "k-1", { reason: "another invoice" }),
        await credit(user.accountId, -100, "k-1"),
      ]) {
        expect(attempt.status).toBe(409);
        expect(((await attempt.json()) as { error: { code: string } }).error.code).toBe(
          "idempotency_conflict",
        );
      }
      expect(await balanceOf(user.accountId)).toBe(100);
      expect((await credit(neighbour.accountId, 100, "k-1")).status).toBe(200);
      expect(await balanceOf(neighbour.accountId)).toBe(100);
      // Without a key every call is a new entry, as before.
      expect((await credit(user.accountId, 5, undefined)).status).toBe(200);
      expect((await credit(user.accountId, 5, undefined)).status).toBe(200);
      expect(await balanceOf(user.accountId)).toBe(110);
    },
  );

  it.skipIf(!available)(
    "a retried debit is a replay even when the balance could no longer pay it",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 1_000 });
      expect((await credit(user.accountId, -1_000, "refund-7")).status).toBe(200);
      const retry = await credit(user.accountId, -1_000, "refund-7");
      expect(retry.status).toBe(200);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(((await retry.json()) as CreditAnswer).balance_micros).toBe(0);
      expect(await balanceOf(user.accountId)).toBe(0);
    },
  );

  it.skipIf(!available)(
    "a malformed key is refused before anything is written; the key never shows in the ledger",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 0 });
      for (const bad of ["with space", "x".repeat(256), "caf\u00e9"]) {
        const answer = await credit(user.accountId, 100, bad);
        expect(answer.status).toBe(400);
        expect(((await answer.json()) as { error: { param: string } }).error.param).toBe(
          "Idempotency-Key",
        );
      }
      expect(await balanceOf(user.accountId)).toBe(0);
      expect((await credit(user.accountId, 100, "secret-invoice-ref")).status).toBe(200);
      const ledger = await (await gateway.request("/v1/account/ledger", { key: user.key })).text();
      expect(ledger).not.toContain("secret-invoice-ref");
      expect(ledger).toMatch(/"request_id":"adj_[0-9a-f]{40}"/);
    },
  );
});
