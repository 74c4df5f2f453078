/**
 * Account suspension and idempotent admin credits under races and from every way in
 * (docs/accounts.md, "Suspending an account" and "Retries"), through the public HTTP surface,
 * on SQLite or (with SWITCHYARD_TEST_BACKEND=postgres) PostgreSQL and Redis: concurrent
 * suspensions record one, two admins suspending each other leave one standing, an MCP session
 * and a console cookie are refused, a credit and a debit racing under one key make one entry.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, makeTempDir, runCli } from "./support/cli-process.ts";
import { accountWithPassword, newApiKey, PASSWORD } from "./support/console-accounts.ts";
import {
  createUser,
  startTestGateway,
  TEST_BACKEND,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";

const onPostgres = TEST_BACKEND === "postgres";

async function errorCode(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

describe("suspension and idempotent credits under races", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());
  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });
  const suspend = (id: string, reason = "review") =>
    admin(`/v1/admin/accounts/${id}/suspend`, { json: { reason } });

  /**
   * Holds the account's row locked (PostgreSQL only) while `start` sends its requests, so that
   * they are all under way at once when it is let go.
   */
  async function withRowLocked<T>(accountId: string, start: () => Promise<T>): Promise<T> {
    if (!onPostgres) return start();
    const lock = new pg.Client({ connectionString: gateway.services.config.database_url });
    await lock.connect();
    await lock.query("BEGIN");
    await lock.query("SELECT id FROM accounts WHERE id = $1 FOR UPDATE", [accountId]);
    const pending = start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    await lock.query("COMMIT");
    await lock.end();
    return pending;
  }

  it("concurrent suspensions of one account record one suspension, whose reason stays", async () => {
    const user = await createUser(gateway);
    const answers = await withRowLocked(user.accountId, () =>
      Promise.all(
        ["first", "second", "third", "fourth"].map((reason) => suspend(user.accountId, reason)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const audit = (await (
      await admin(`/v1/admin/audit?target=${user.accountId}&action=account.suspend`)
    ).json()) as { data: Array<{ reason: string | null }> };
    const account = await gateway.services.store.findAccountById(user.accountId);
    // "Suspending a suspended account changes nothing and records nothing (the first time and
    // reason stay)": one event, and the reason on the account is the one it recorded.
    expect(audit.data.map((event) => event.reason)).toHaveLength(1);
    expect(account?.suspendedReason).toBe(audit.data[0]?.reason);
  });

  it("two admins suspending each other at the same moment leave one of them standing", async () => {
    const first = await accountWithPassword(gateway, "admin");
    const second = await accountWithPassword(gateway, "admin");
    const keyOf = async (id: string) => newApiKey(gateway, id);
    const [firstKey, secondKey] = [await keyOf(first.id), await keyOf(second.id)];
    const cross = (key: string, target: string) =>
      gateway.request(`/v1/admin/accounts/${target}/suspend`, { key, json: { reason: "x" } });
    const answers = await withRowLocked(first.id, () =>
      Promise.all([cross(firstKey, second.id), cross(secondKey, first.id)]),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403]);
    const standing = await Promise.all(
      [firstKey, secondKey].map(async (key) => (await admin("/v1/account", { key })).status),
    );
    expect(standing.sort()).toEqual([200, 403]);
  });

  it("an MCP session opened before the suspension: the call under way is billed, the next refused", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const client = await connectMcp(gateway, user.key);
    try {
      const slow = client.callTool({
        name: "chat",
        arguments: {
          model: "gpt-4o-mini",
          messages: [
            { role: "system", content: "[[sandbox:delay=600]]" },
            { role: "user", content: "hi" },
          ],
        },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await suspend(user.accountId)).status).toBe(200);
      const result = await slow;
      expect(result.isError).toBeFalsy();
      const entries = await gateway.services.store.listEntries(user.accountId, { limit: 20 });
      expect(entries.some((entry) => entry.kind === "charge" && entry.amountMicros < 0)).toBe(true);
      await expect(client.callTool({ name: "get_balance", arguments: {} })).rejects.toThrow(
        /403|suspended/,
      );
    } finally {
      await client.close().catch(() => {});
    }
  });

  it("a console cookie session and a suspended admin's key are refused everywhere", async () => {
    const { email, id } = await accountWithPassword(gateway, "admin");
    const adminKey = await newApiKey(gateway, id);
    const login = await gateway.request("/v1/account/login", {
      json: { email, password: PASSWORD, session: "cookie" },
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const viaCookie = (path: string) =>
      gateway.request(path, { headers: { cookie, "x-switchyard-console": "1" } });
    expect((await viaCookie("/v1/account/balance")).status).toBe(200);
    expect((await gateway.request("/v1/admin/accounts", { key: adminKey })).status).toBe(200);
    expect((await suspend(id)).status).toBe(200);
    for (const answer of [
      await viaCookie("/v1/account/balance"),
      await viaCookie("/v1/admin/accounts"),
      await gateway.request("/v1/admin/accounts", { key: adminKey }),
      await gateway.request("/metrics", { key: adminKey }),
      await gateway.request(`/v1/admin/accounts/${id}/unsuspend`, {
        key: adminKey,
        method: "POST",
      }),
    ]) {
      expect(answer.status).toBe(403);
      expect(await errorCode(answer)).toBe("account_suspended");
    }
  });

  it("a credit and a debit racing under one key: one entry, the other a 409", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    const send = (amount: number) =>
      admin(`/v1/admin/accounts/${user.accountId}/credit`, {
        json: { amount_micros: amount, reason: "invoice 77" },
        headers: { "idempotency-key": "inv-77" },
      });
    const [credit, debit] = await withRowLocked(user.accountId, async () => {
      const first = send(1_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = send(-500);
      return Promise.all([first, second]);
    });
    expect(credit.status).toBe(200);
    const entries = (
      await gateway.services.store.listEntries(user.accountId, { limit: 20 })
    ).filter((entry) => entry.kind === "credit" || entry.kind === "debit");
    expect(entries).toHaveLength(1);
    expect((await gateway.services.store.findAccountById(user.accountId))?.balanceMicros).toBe(
      1_000,
    );
    // The same key with another amount: `409 idempotency_conflict`, also while the first is
    // still being written.
    expect({ status: debit.status, code: await errorCode(debit) }).toEqual({
      status: 409,
      code: "idempotency_conflict",
    });
  });

  it("a retry after the credited money was spent and debited away replays, writes nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    const credit = (amount: number, key: string) =>
      admin(`/v1/admin/accounts/${user.accountId}/credit`, {
        json: { amount_micros: amount, reason: "top-up" },
        headers: { "idempotency-key": key },
      });
    expect((await credit(2_000, "k!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")).status).toBe(200);
    expect((await credit(-2_000, "drain")).status).toBe(200);
    const retry = await credit(2_000, "k!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(((await retry.json()) as { balance_micros: number }).balance_micros).toBe(0);
    const retriedDebit = await credit(-2_000, "drain");
    expect(retriedDebit.status).toBe(200);
    expect(retriedDebit.headers.get("idempotent-replayed")).toBe("true");
    expect((await gateway.services.store.findAccountById(user.accountId))?.balanceMicros).toBe(0);
    const ledger = (await (
      await gateway.request(`/v1/admin/audit?target=${user.accountId}`, { key: gateway.adminKey })
    ).json()) as { data: Array<{ action: string }> };
    expect(
      ledger.data.filter(
        (event) => event.action.startsWith("account.credit") || event.action === "account.debit",
      ),
    ).toHaveLength(2);
  });
});

describe("the CLI's help", { timeout: 60_000 }, () => {
  it("names --idempotency-key in 'switchyard accounts --help'", async () => {
    const cwd = makeTempDir("switchyard-review-help-");
    const result = await runCli(["accounts", "--help"], { cwd, env: cleanEnv() });
    expect(result.stdout).toContain("--idempotency-key");
  });
});
