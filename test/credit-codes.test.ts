/**
 * Credit codes through the HTTP API: an operator makes codes (shown once, stored as hashes), lists
 * and revokes them; an account redeems a code once — also when two redemptions race — through
 * the ledger, within the balance maximum and the redemption attempt limits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const MAX_BALANCE = 100_000_000;
const CODE = /^SWY-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/;

interface CodeObject {
  id: string;
  object: string;
  code?: string;
  prefix: string;
  amount_micros: number;
  currency: string;
  note: string | null;
  status: string;
  created_at: string;
  expires_at: string | null;
  redeemed_at: string | null;
  redeemed_by: string | null;
}

interface CodeList {
  object: string;
  data: CodeObject[];
  has_more?: boolean;
  next_cursor?: string | null;
}

async function makeCodes(gateway: TestGateway, body: Record<string, unknown>) {
  const response = await gateway.request("/v1/admin/credit-codes", {
    key: gateway.adminKey,
    json: body,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as CodeList).data;
}

function redeem(gateway: TestGateway, key: string, code: string) {
  return gateway.request("/v1/account/credit-codes/redeem", { key, json: { code } });
}

async function balanceOf(gateway: TestGateway, key: string): Promise<number> {
  const response = await gateway.request("/v1/account/balance", { key });
  return ((await response.json()) as { balance_micros: number }).balance_micros;
}

describe("credit codes", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        billing: { max_balance_micros: MAX_BALANCE },
        auth: { redeem_attempts_per_minute: null, redeem_attempts_per_account_per_minute: null },
      },
    });
  });
  afterAll(() => gateway.close());

  it("makes codes shown once; listings carry the prefix only", async () => {
    const made = await makeCodes(gateway, { amount_micros: 2_500_000, count: 3, note: "promo" });
    expect(made).toHaveLength(3);
    for (const code of made) {
      expect(code).toMatchObject({
        object: "credit_code",
        amount_micros: 2_500_000,
        currency: "USD",
        note: "promo",
        status: "active",
        expires_at: null,
        redeemed_at: null,
        redeemed_by: null,
      });
      expect(code.code).toMatch(CODE);
      expect(code.prefix).toBe(code.code!.slice(0, 8));
      expect(code.id).toMatch(/^cc_/);
    }
    expect(new Set(made.map((code) => code.code)).size).toBe(3);

    const listed = await gateway.request("/v1/admin/credit-codes?limit=100", {
      key: gateway.adminKey,
    });
    const text = await listed.text();
    for (const code of made) expect(text).not.toContain(code.code!.slice(9));
    const list = JSON.parse(text) as CodeList;
    expect(list).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    const mine = list.data.filter((code) => made.some((m) => m.id === code.id));
    expect(mine).toHaveLength(3);
    for (const code of mine) expect(code).not.toHaveProperty("code");

    // Pages follow the shared cursor convention.
    const first = (await (
      await gateway.request("/v1/admin/credit-codes?limit=2", { key: gateway.adminKey })
    ).json()) as CodeList;
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const second = (await (
      await gateway.request(`/v1/admin/credit-codes?limit=2&cursor=${first.next_cursor}`, {
        key: gateway.adminKey,
      })
    ).json()) as CodeList;
    expect(second.data.map((code) => code.id)).not.toContain(first.data[0]!.id);
    await expectGatewayError(
      await gateway.request("/v1/admin/credit-codes?cursor=bm9wZQ", { key: gateway.adminKey }),
      { status: 400, type: "invalid_request_error", code: "invalid_request" },
    );
  });

  it("is refused to non-admins and checks its input", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    await expectGatewayError(
      await gateway.request("/v1/admin/credit-codes", {
        key: user.key,
        json: { amount_micros: 1_000_000 },
      }),
      { status: 403, type: "permission_error", code: "admin_required" },
    );
    for (const [body, param] of [
      [{ amount_micros: 0 }, "amount_micros"],
      [{ amount_micros: MAX_BALANCE + 1 }, "amount_micros"],
      [{ amount_micros: 1, count: 101 }, "count"],
      [{ amount_micros: 1, note: "x".repeat(201) }, "note"],
      [{ amount_micros: 1, expires_at: "not a time" }, "expires_at"],
      [{ amount_micros: 1, expires_at: "2001-01-01T00:00:00Z" }, "expires_at"],
    ] as const) {
      await expectGatewayError(
        await gateway.request("/v1/admin/credit-codes", { key: gateway.adminKey, json: body }),
        { status: 400, type: "invalid_request_error", code: "invalid_parameter", param },
      );
    }
  });

  it("credits the account once through the ledger, whatever the case, dashes and spaces", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const [code] = await makeCodes(gateway, { amount_micros: 3_000_000 });
    const typed = ` ${code!.code!.toLowerCase().replaceAll("-", " ").replace("swy ", "")} `;
    const response = await redeem(gateway, user.key, typed);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: "credit_code_redemption",
      amount_micros: 3_000_000,
      balance_micros: 4_000_000,
      currency: "USD",
      code_prefix: code!.prefix,
    });
    expect(await balanceOf(gateway, user.key)).toBe(4_000_000);

    await expectGatewayError(await redeem(gateway, user.key, code!.code!), {
      status: 409,
      type: "invalid_request_error",
      code: "credit_code_redeemed",
    });
    const other = await createUser(gateway, { balanceMicros: 0 });
    await expectGatewayError(await redeem(gateway, other.key, code!.code!.replaceAll("-", "")), {
      status: 409,
      type: "invalid_request_error",
      code: "credit_code_redeemed",
    });
    expect(await balanceOf(gateway, other.key)).toBe(0);

    const entries = await gateway.services.store.listEntries(user.accountId, { limit: 10 });
    const credit = entries.filter((entry) => entry.kind === "credit_code");
    expect(credit).toHaveLength(1);
    expect(credit[0]).toMatchObject({ amountMicros: 3_000_000 });
    expect(credit[0]!.reason).toContain(code!.prefix);

    const listed = (await (
      await gateway.request("/v1/admin/credit-codes?status=redeemed&limit=100", {
        key: gateway.adminKey,
      })
    ).json()) as CodeList;
    const shown = listed.data.find((item) => item.id === code!.id);
    expect(shown).toMatchObject({ status: "redeemed", redeemed_by: user.accountId });
    expect(shown!.redeemed_at).not.toBeNull();
    expect((await gateway.services.store.verify()).problems).toEqual([]);
  });

  it("credits exactly once when many redemptions of one code race", async () => {
    const users = await Promise.all(
      Array.from({ length: 6 }, () => createUser(gateway, { balanceMicros: 0 })),
    );
    for (let round = 0; round < 3; round++) {
      const [code] = await makeCodes(gateway, { amount_micros: 1_000_000 });
      const responses = await Promise.all(
        users.map((user) => redeem(gateway, user.key, code!.code!)),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
      await Promise.all(responses.map((response) => response.arrayBuffer()));
    }
    const balances = await Promise.all(users.map((user) => balanceOf(gateway, user.key)));
    expect(balances.reduce((sum, balance) => sum + balance, 0)).toBe(3_000_000);
    expect((await gateway.services.store.verify()).problems).toEqual([]);
  });

  it("refuses unknown, revoked and expired codes alike, and revoking a redeemed code", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    const [revoked, redeemed, expiring] = await makeCodes(gateway, {
      amount_micros: 1_000_000,
      count: 3,
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });

    const revoke = await gateway.request(`/v1/admin/credit-codes/${revoked!.id}/revoke`, {
      key: gateway.adminKey,
      method: "POST",
    });
    expect(revoke.status).toBe(200);
    expect(await revoke.json()).toMatchObject({ id: revoked!.id, status: "revoked" });

    expect((await redeem(gateway, user.key, redeemed!.code!)).status).toBe(200);
    await expectGatewayError(
      await gateway.request(`/v1/admin/credit-codes/${redeemed!.id}/revoke`, {
        key: gateway.adminKey,
        method: "POST",
      }),
      { status: 409, type: "invalid_request_error", code: "credit_code_redeemed" },
    );
    await expectGatewayError(
      await gateway.request("/v1/admin/credit-codes/cc_nothing/revoke", {
        key: gateway.adminKey,
        method: "POST",
      }),
      { status: 404, type: "invalid_request_error", code: "credit_code_not_found" },
    );

    const realNow = gateway.services.now;
    gateway.services.now = () => realNow() + 120_000;
    let expiredAnswer: Response;
    try {
      expiredAnswer = await redeem(gateway, user.key, expiring!.code!);
      const listed = (await (
        await gateway.request("/v1/admin/credit-codes?status=expired&limit=100", {
          key: gateway.adminKey,
        })
      ).json()) as CodeList;
      expect(listed.data.map((code) => code.id)).toContain(expiring!.id);
      expect(listed.data.every((code) => code.status === "expired")).toBe(true);
    } finally {
      gateway.services.now = realNow;
    }

    const messages = new Set<string>();
    for (const response of [
      await redeem(gateway, user.key, revoked!.code!),
      expiredAnswer,
      await redeem(gateway, user.key, "SWY-2222-3333-4444"),
      await redeem(gateway, user.key, "not a code at all"),
    ]) {
      const error = await expectGatewayError(response, {
        status: 400,
        type: "invalid_request_error",
        code: "credit_code_invalid",
        param: "code",
      });
      messages.add(error.message);
    }
    expect(messages.size).toBe(1);
    expect(await balanceOf(gateway, user.key)).toBe(1_000_000);

    const active = (await (
      await gateway.request("/v1/admin/credit-codes?status=active&limit=100", {
        key: gateway.adminKey,
      })
    ).json()) as CodeList;
    expect(active.data.map((code) => code.id)).toContain(expiring!.id);
    expect(active.data.map((code) => code.id)).not.toContain(revoked!.id);
    expect(active.data.every((code) => code.status === "active")).toBe(true);
  });

  it("keeps the balance within billing.max_balance_micros, leaving the code unredeemed", async () => {
    const rich = await createUser(gateway, { balanceMicros: MAX_BALANCE - 500_000 });
    const [code] = await makeCodes(gateway, { amount_micros: 1_000_000 });
    await expectGatewayError(await redeem(gateway, rich.key, code!.code!), {
      status: 400,
      type: "invalid_request_error",
      code: "balance_limit_exceeded",
    });
    expect(await balanceOf(gateway, rich.key)).toBe(MAX_BALANCE - 500_000);
    const poor = await createUser(gateway, { balanceMicros: 0 });
    expect((await redeem(gateway, poor.key, code!.code!)).status).toBe(200);
    expect(await balanceOf(gateway, poor.key)).toBe(1_000_000);
    expect((await gateway.services.store.verify()).problems).toEqual([]);
  });

  it("redeems with a login session too", async () => {
    const email = `redeemer-${Date.now()}@example.com`;
    const created = await gateway.request("/v1/admin/accounts", {
      key: gateway.adminKey,
      json: { email, password: "a long enough password" },
    });
    expect(created.status).toBe(201);
    const login = await gateway.request("/v1/account/login", {
      json: { email, password: "a long enough password" },
    });
    const { token } = (await login.json()) as { token: string };
    const [code] = await makeCodes(gateway, { amount_micros: 700_000 });
    const response = await redeem(gateway, token, code!.code!);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ balance_micros: 700_000 });
  });
});

describe("credit code guessing", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        auth: { redeem_attempts_per_minute: 100, redeem_attempts_per_account_per_minute: 3 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("is limited per account: a guesser is refused with 429 and Retry-After, even for a real code", async () => {
    const guesser = await createUser(gateway, { balanceMicros: 0 });
    const [code] = await makeCodes(gateway, { amount_micros: 1_000_000 });
    for (let i = 0; i < 3; i++) {
      await expectGatewayError(await redeem(gateway, guesser.key, `SWY-2222-2222-222${i + 2}`), {
        status: 400,
        type: "invalid_request_error",
        code: "credit_code_invalid",
      });
    }
    const refused = await redeem(gateway, guesser.key, code!.code!);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectGatewayError(refused, {
      status: 429,
      type: "rate_limit_error",
      code: "too_many_attempts",
    });
    expect(await balanceOf(gateway, guesser.key)).toBe(0);
    // Another account is not held back by the guesser.
    const honest = await createUser(gateway, { balanceMicros: 0 });
    expect((await redeem(gateway, honest.key, code!.code!)).status).toBe(200);
  });
});
