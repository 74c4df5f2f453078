/**
 * `GET /v1/account/ledger`: the account's own entries newest first, each with the balance after
 * it, paged by the shared cursor convention and filtered by kind; and the admin account list's
 * email search, both as the web console uses them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface Entry {
  id: string;
  object: string;
  kind: string;
  amount_micros: number;
  balance_after_micros: number;
  reason: string | null;
  request_id: string | null;
  created_at: string;
}

interface Page {
  object: string;
  data: Entry[];
  has_more: boolean;
  next_cursor: string | null;
}

async function ledger(gateway: TestGateway, key: string, query = ""): Promise<Page> {
  const response = await gateway.request(`/v1/account/ledger${query}`, { key });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Page;
}

describe("account ledger", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("lists the account's entries newest first with the balance after each", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const admin = (path: string, json: unknown) =>
      gateway.request(path, { key: gateway.adminKey, json });
    expect(
      (
        await admin(`/v1/admin/accounts/${user.accountId}/credit`, {
          amount_micros: 1_000_000,
          reason: "goodwill",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await admin(`/v1/admin/accounts/${user.accountId}/credit`, {
          amount_micros: -500_000,
          reason: "correction",
        })
      ).status,
    ).toBe(200);
    const codes = (await (
      await admin("/v1/admin/credit-codes", { amount_micros: 2_000_000 })
    ).json()) as { data: Array<{ code: string; prefix: string }> };
    const redeemed = await gateway.request("/v1/account/credit-codes/redeem", {
      key: user.key,
      json: { code: codes.data[0]!.code },
    });
    expect(redeemed.status).toBe(200);
    const chat = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] },
    });
    expect(chat.status).toBe(200);
    const requestId = chat.headers.get("x-request-id");
    await chat.arrayBuffer();

    const balance = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as { balance_micros: number };

    const page = await ledger(gateway, user.key);
    expect(page).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    const entries = page.data;
    expect(entries[0]!.balance_after_micros).toBe(balance.balance_micros);
    for (let i = 0; i + 1 < entries.length; i++) {
      expect(entries[i]!.balance_after_micros - entries[i]!.amount_micros).toBe(
        entries[i + 1]!.balance_after_micros,
      );
    }
    const oldest = entries.at(-1)!;
    expect(oldest).toMatchObject({ kind: "credit", amount_micros: 5_000_000 });
    expect(oldest.balance_after_micros).toBe(5_000_000);
    const kinds = entries.map((entry) => entry.kind);
    expect(kinds).toContain("charge");
    expect(entries.find((entry) => entry.kind === "charge")!.request_id).toBe(requestId);
    for (const entry of entries) {
      expect(entry.object).toBe("ledger_entry");
      expect(entry.id).toMatch(/^led_/);
      expect(Number.isNaN(Date.parse(entry.created_at))).toBe(false);
    }

    const codeEntries = await ledger(gateway, user.key, "?kind=credit_code");
    expect(codeEntries.data).toHaveLength(1);
    expect(codeEntries.data[0]).toMatchObject({
      kind: "credit_code",
      amount_micros: 2_000_000,
      balance_after_micros: 7_500_000,
    });
    expect(codeEntries.data[0]!.reason).toContain(codes.data[0]!.prefix);
    const debits = await ledger(gateway, user.key, "?kind=debit");
    expect(debits.data.map((entry) => [entry.amount_micros, entry.balance_after_micros])).toEqual([
      [-500_000, 5_500_000],
    ]);

    // Page by page, the same entries and balances, none twice.
    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const next: Page = await ledger(
        gateway,
        user.key,
        `?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(next.data.length).toBeLessThanOrEqual(2);
      paged.push(...next.data);
      cursor = next.next_cursor;
      expect(next.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(paged).toEqual(entries);

    // Another account sees only its own.
    const other = await createUser(gateway, { balanceMicros: 1_000 });
    const theirs = await ledger(gateway, other.key);
    expect(theirs.data).toHaveLength(1);
    expect(theirs.data[0]).toMatchObject({ amount_micros: 1_000, balance_after_micros: 1_000 });
  });

  it("refuses a cursor it did not give out and an unknown kind", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000 });
    await expectGatewayError(
      await gateway.request("/v1/account/ledger?cursor=WyJ4Il0", { key: user.key }),
      { status: 400, type: "invalid_request_error", code: "invalid_request" },
    );
    await expectGatewayError(
      await gateway.request("/v1/account/ledger?kind=gift", { key: user.key }),
      { status: 400, type: "invalid_request_error", code: "invalid_parameter" },
    );
  });
});

describe("admin account search", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("finds accounts by a case-insensitive part of the email, wildcards taken literally", async () => {
    const tag = `find${Date.now()}`;
    for (const email of [`alice.${tag}@example.com`, `bob.${tag}@example.org`, "carol@x.io"]) {
      const created = await gateway.request("/v1/admin/accounts", {
        key: gateway.adminKey,
        json: { email },
      });
      expect(created.status).toBe(201);
    }
    const search = async (text: string) => {
      const response = await gateway.request(
        `/v1/admin/accounts?email=${encodeURIComponent(text)}`,
        { key: gateway.adminKey },
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: Array<{ email: string }>; total: number };
      return { emails: body.data.map((account) => account.email).sort(), total: body.total };
    };
    expect(await search(tag.toUpperCase())).toEqual({
      emails: [`alice.${tag}@example.com`, `bob.${tag}@example.org`],
      total: 2,
    });
    expect(await search(`ALICE.${tag}`)).toEqual({
      emails: [`alice.${tag}@example.com`],
      total: 1,
    });
    expect(await search("%")).toEqual({ emails: [], total: 0 });
    expect(await search("_")).toEqual({ emails: [], total: 0 });
    const all = await search("");
    expect(all.total).toBeGreaterThanOrEqual(4);
  });
});
