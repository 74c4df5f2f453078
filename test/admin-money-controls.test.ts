/**
 * The admin API's money under races and hostile values, on SQLite and PostgreSQL: concurrent
 * debits and credits, a debit mid-stream, a key revoked mid-stream, amounts of every wrong type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "./support/cluster.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { postgresReachable } from "./support/postgres.ts";

const pgUp = await postgresReachable();

describe.each([
  { backend: "sqlite", available: true },
  { backend: "postgres", available: pgUp },
])("admin money controls ($backend)", ({ backend, available }) => {
  let gateway: TestGateway;
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  beforeAll(async () => {
    if (!available) return;
    if (backend === "postgres") db = await freshDatabase();
    gateway = await startTestGateway(db ? { config: { database_url: db.url } } : {});
  });
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });
  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });
  const credit = (accountId: string, amount: unknown, reason = "review") =>
    admin(`/v1/admin/accounts/${accountId}/credit`, { json: { amount_micros: amount, reason } });

  it.skipIf(!available)(
    "a debit mid-stream stops at the hold; a revoked key's stream is still billed",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 1_000_000 });
      const response = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: {
          model: "gpt-4o-mini",
          stream: true,
          max_tokens: 200,
          messages: [
            { role: "system", content: "[[sandbox:chunk-delay=100;words=20]]" },
            { role: "user", content: "hello" },
          ],
        },
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      const mid = (await (
        await gateway.request("/v1/account/balance", { key: user.key })
      ).json()) as {
        balance_micros: number;
        held_micros: number;
      };
      expect(mid.held_micros).toBeGreaterThan(0);
      expect((await credit(user.accountId, -1_000_000)).status).toBe(400);
      expect((await credit(user.accountId, -(mid.balance_micros - mid.held_micros))).status).toBe(
        200,
      );
      expect((await admin(`/v1/admin/keys/${user.keyId}/revoke`, { method: "POST" })).status).toBe(
        200,
      );
      while (!(await reader.read()).done) {}
      await new Promise((resolve) => setTimeout(resolve, 300));
      const entries = await gateway.services.store.listEntries(user.accountId, { limit: 10 });
      expect(entries.some((entry) => entry.kind === "charge" && entry.amountMicros < 0)).toBe(true);
      expect((await gateway.services.store.verify()).problems).toEqual([]);
    },
  );

  it.skipIf(!available)(
    "concurrent debits never overdraw; concurrent credits all land in the ledger",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 100 });
      const debits = await Promise.all(
        Array.from({ length: 10 }, () => credit(user.accountId, -30).then((r) => r.status)),
      );
      expect(debits.filter((status) => status === 200)).toHaveLength(3);
      const credits = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          credit(user.accountId, 1, `c${i}`).then((r) => r.status),
        ),
      );
      expect(credits.every((status) => status === 200)).toBe(true);
      const account = await gateway.services.store.findAccountById(user.accountId);
      expect(account?.balanceMicros).toBe(30);
      expect((await gateway.services.store.verify()).problems).toEqual([]);
    },
  );

  it.skipIf(!available)(
    "refuses strings, fractions, booleans, null, 0, -0 and amounts past 2^53 - 1",
    async () => {
      const user = await createUser(gateway, { balanceMicros: 1000 });
      for (const amount of ["100", 1.5, 1e300, 2 ** 53, -(2 ** 53), null, true, [], {}, 0, -0]) {
        expect((await credit(user.accountId, amount)).status, JSON.stringify(amount)).toBe(400);
      }
      expect((await gateway.services.store.findAccountById(user.accountId))?.balanceMicros).toBe(
        1000,
      );
    },
  );
});
