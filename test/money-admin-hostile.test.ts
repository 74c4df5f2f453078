/**
 * Hostile and damaged cases of the money-administration paths: a ledger `verify` must report,
 * and spend caps of a key and its parents that are short together. Each failed before its fix.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe("ledger verify (docs/billing.md#the-ledger)", () => {
  let store: Store;
  let raw: SQLite.Database;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "money-verify-")), "ledger.sqlite");
    store = await openStore(file);
    raw = new SQLite(file);
  });
  afterAll(async () => {
    raw.close();
    await store.close();
  });

  async function account(balance: number): Promise<string> {
    const { id } = await store.createAccount({
      email: `${Math.random()}@example.com`,
      passwordHash: null,
      role: "user",
    });
    if (balance) await store.adjustBalance({ accountId: id, amountMicros: balance, reason: "t" });
    return id;
  }
  const kindsOf = async (accountId: string) =>
    (await store.verify()).problems
      .filter((problem) => problem.accountId === accountId)
      .map((problem) => problem.kind);

  it("reports ledger amounts past 2^53 even when they cancel out in the account's sum", async () => {
    const id = await account(10);
    // 2^60 in and 2^60 out: the sum (and so the balance) is fine, each entry is not.
    const insert = raw.prepare(
      "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, created_at) values (?, ?, ?, ?, 0, 0)",
    );
    insert.run(`led_in_${id}`, id, "credit", 1152921504606846976n);
    insert.run(`led_out_${id}`, id, "debit", -1152921504606846976n);
    expect(await kindsOf(id)).toContain("out_of_range");
  });

  it("reports a ledger charge larger than the hold it settled", async () => {
    const id = await account(10_000);
    const request = `req_money_${id}`;
    const insert = raw.prepare(
      "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, request_id, created_at) values (?, ?, ?, ?, ?, ?, 0)",
    );
    // A hold of 100, then a charge of 5,000 against it; the balance follows the ledger.
    insert.run(`led_h_${id}`, id, "hold", 0, 100, request);
    insert.run(`led_c_${id}`, id, "charge", -5_000, -100, request);
    raw.prepare("update accounts set balance_micros = 5000 where id = ?").run(id);
    // The usage record (and its spend row) claim a charge within the hold.
    raw
      .prepare(
        "insert into usage_records (request_id, account_id, model, endpoint, status, cost_micros, held_micros, created_at) values (?, ?, 'm', '/v1/chat/completions', 'succeeded', 100, 100, 0)",
      )
      .run(request, id);
    raw
      .prepare("insert into spend_by_day (owner_id, day, spent_micros) values (?, 0, 100)")
      .run(id);
    expect(await kindsOf(id)).toContain("charge_above_hold");
  });
  it("reports a charge entry that adds money", async () => {
    const id = await account(10_000);
    raw
      .prepare(
        "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, request_id, created_at) values (?, ?, 'charge', 500, 0, ?, 0)",
      )
      .run(`led_pos_${id}`, id, `req_pos_${id}`);
    raw.prepare("update accounts set balance_micros = balance_micros + 500 where id = ?").run(id);
    expect(await kindsOf(id)).toContain("positive_charge");
  });

  it("reports more held than the balance", async () => {
    const id = await account(1_000);
    const insert = raw.prepare(
      "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, created_at) values (?, ?, 'hold', 0, 5000, 0)",
    );
    insert.run(`led_held_${id}`, id);
    raw.prepare("update accounts set held_micros = 5000 where id = ?").run(id);
    expect(await kindsOf(id)).toEqual(["held_above_balance"]);
  });
});

describe("key spend caps (docs/budgets.md#when-the-cap-is-short)", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  const chat = (maxTokens: number) => ({
    model: "gpt-4o-mini",
    max_tokens: maxTokens,
    messages: [{ role: "user", content: "budget" }],
  });
  const quote = async (maxTokens: number) => {
    const response = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: chat(maxTokens),
    });
    return ((await response.json()) as { max_cost_micros: number }).max_cost_micros;
  };

  it("lowers the output cap to what the tighter parent cap has left instead of answering 402", async () => {
    const hold = await quote(400);
    const minimumHold = await quote(16);
    const probe = await createUser(gateway);
    const probed = await gateway.request("/v1/chat/completions", {
      key: probe.key,
      json: chat(400),
    });
    const cost = Number(probed.headers.get("x-switchyard-cost-micros"));
    expect(cost).toBeGreaterThan(0);

    // Parent capped (lifetime); its child inherits the same cap.
    const cap = hold - 1 + cost;
    const parent = await createUser(gateway, { keyOptions: { spend_limit_micros: cap } });
    const minted = await gateway.request("/v1/account/keys", {
      key: parent.key,
      json: { name: "c" },
    });
    const child = (await minted.json()) as { key: string; id: string };
    // The child spends once: its own cap now has hold − 1 left, less than a full hold.
    expect(
      (await gateway.request("/v1/chat/completions", { key: child.key, json: chat(400) })).status,
    ).toBe(200);
    // The parent spends directly until its cap has a little more than a minimum hold left.
    const spent = async (keyId: string) =>
      (await gateway.services.store.keySpend(parent.accountId, keyId, 0)).spentMicros;
    for (let i = 0; i < 500 && cap - (await spent(parent.keyId)) >= 3 * minimumHold; i++) {
      const response = await gateway.request("/v1/chat/completions", {
        key: parent.key,
        json: chat(16),
      });
      expect(response.status).toBe(200);
    }
    const parentRoom = cap - (await spent(parent.keyId));
    expect(parentRoom).toBeGreaterThanOrEqual(minimumHold);

    // Both caps are short; the parent's is the tighter and still fits min_output_tokens.
    const response = await gateway.request("/v1/chat/completions", {
      key: child.key,
      json: chat(400),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(Number(response.headers.get("x-switchyard-output-cap-lowered"))).toBeGreaterThanOrEqual(
      16,
    );
    expect(await spent(parent.keyId)).toBeLessThanOrEqual(cap);
  });
});
