import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface AccountBody {
  id: string;
  object: string;
  email: string;
  role: string;
  balance_micros: number;
  balance_usd: string;
}

interface KeyBody {
  id: string;
  key: string;
  name: string;
  account_id: string;
  models: string[];
  rpm: number | null;
  concurrency: number | null;
  expires_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
}

let counter = 0;
const uniqueEmail = () => `admin-test-${++counter}-${Date.now()}@example.com`;

describe("the admin API", () => {
  let gateway: TestGateway;
  let user: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    gateway = await startTestGateway();
    user = await createUser(gateway, { balanceMicros: 1_000_000 });
  });
  afterAll(() => gateway.close());

  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });

  /** Every admin route, with a body that would be valid for an admin. */
  const routes = () =>
    [
      ["GET", "/v1/admin/accounts", undefined],
      ["POST", "/v1/admin/accounts", { email: uniqueEmail() }],
      ["GET", `/v1/admin/accounts/${user.accountId}/keys`, undefined],
      ["POST", `/v1/admin/accounts/${user.accountId}/keys`, { name: "sneaky" }],
      ["POST", `/v1/admin/accounts/${user.accountId}/credit`, { amount_micros: 1, reason: "x" }],
      ["POST", `/v1/admin/keys/${user.keyId}/revoke`, undefined],
      ["GET", "/v1/admin/audit", undefined],
    ] as const;

  it("answers 403 admin_required to a user's key on every admin route", async () => {
    for (const [method, path, json] of routes()) {
      const response = await gateway.request(path, {
        key: user.key,
        method,
        ...(json ? { json } : {}),
      });
      await expectGatewayError(response, {
        status: 403,
        type: "permission_error",
        code: "admin_required",
      });
    }
    // Nothing happened: the user's key is intact and the balance unchanged.
    const me = await gateway.request("/v1/account", { key: user.key });
    expect(await me.json()).toMatchObject({ balance_micros: 1_000_000 });
  });

  it("checks the key before reading the body", async () => {
    const garbage = { method: "POST", headers: { "content-type": "application/json" }, body: "{" };
    await expectGatewayError(
      await gateway.request("/v1/admin/accounts", { key: user.key, ...garbage }),
      { status: 403, type: "permission_error", code: "admin_required" },
    );
    await expectInvalidKey(await gateway.request("/v1/admin/accounts", garbage));
    await expectInvalidKey(await gateway.request("/v1/account/keys", garbage));
  });

  it("answers 401 without a key on every admin route", async () => {
    for (const [method, path, json] of routes()) {
      await expectInvalidKey(await gateway.request(path, { method, ...(json ? { json } : {}) }));
    }
  });

  describe("accounts", () => {
    it("lists accounts with paging", async () => {
      const all = await admin("/v1/admin/accounts");
      expect(all.status).toBe(200);
      const body = (await all.json()) as { object: string; data: AccountBody[]; total: number };
      expect(body.object).toBe("list");
      expect(body.total).toBe(body.data.length);
      expect(body.data[0]).toMatchObject({ email: "admin@localhost", role: "admin" });
      expect(body.data.map((account) => account.id)).toContain(user.accountId);

      const page = await admin("/v1/admin/accounts?limit=1&offset=1");
      expect(page.status).toBe(200);
      const paged = (await page.json()) as { data: AccountBody[]; limit: number; offset: number };
      expect(paged).toMatchObject({ limit: 1, offset: 1 });
      expect(paged.data).toEqual([body.data[1]]);

      await expectGatewayError(await admin("/v1/admin/accounts?limit=0"), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "limit",
      });
      await expectGatewayError(await admin("/v1/admin/accounts?limit=ten"), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "limit",
      });
    });

    it("creates an account with a password and an opening balance", async () => {
      const email = uniqueEmail();
      const response = await admin("/v1/admin/accounts", {
        json: { email, password: "operator chosen", balance_micros: 2_500_000 },
      });
      expect(response.status).toBe(201);
      const account = (await response.json()) as AccountBody;
      expect(account).toMatchObject({
        object: "account",
        email,
        role: "user",
        balance_micros: 2_500_000,
        balance_usd: "2.500000",
      });
      const login = await gateway.request("/v1/account/login", {
        json: { email, password: "operator chosen" },
      });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: string };
      const me = await gateway.request("/v1/account", { key: token });
      expect(await me.json()).toMatchObject({ id: account.id, balance_micros: 2_500_000 });

      await expectGatewayError(await admin("/v1/admin/accounts", { json: { email } }), {
        status: 409,
        type: "invalid_request_error",
        code: "account_exists",
      });
      await expectGatewayError(
        await admin("/v1/admin/accounts", { json: { email: uniqueEmail(), balance_micros: -5 } }),
        {
          status: 400,
          type: "invalid_request_error",
          code: "invalid_parameter",
          param: "balance_micros",
        },
      );
    });

    it("creates admins whose keys pass the admin routes", async () => {
      const created = await admin("/v1/admin/accounts", {
        json: { email: uniqueEmail(), role: "admin" },
      });
      const account = (await created.json()) as AccountBody;
      expect(account.role).toBe("admin");
      const keyResponse = await admin(`/v1/admin/accounts/${account.id}/keys`, { json: {} });
      const { key } = (await keyResponse.json()) as KeyBody;
      expect((await gateway.request("/v1/admin/accounts", { key })).status).toBe(200);
    });
  });

  describe("keys", () => {
    it("creates a key for an account with its limits, shown once", async () => {
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const response = await admin(`/v1/admin/accounts/${user.accountId}/keys`, {
        json: {
          name: "batch jobs",
          models: ["gpt-4o-mini", "text-embedding-v4"],
          rpm: 60,
          concurrency: 2,
          expires_at: expires,
        },
      });
      expect(response.status).toBe(201);
      const key = (await response.json()) as KeyBody;
      expect(key).toMatchObject({
        name: "batch jobs",
        account_id: user.accountId,
        models: ["gpt-4o-mini", "text-embedding-v4"],
        rpm: 60,
        concurrency: 2,
        expires_at: expires,
        revoked: false,
        revoked_at: null,
      });
      expect(key.key).toMatch(/^sk-[0-9A-Za-z]{40,}$/);

      const me = await gateway.request("/v1/account", { key: key.key });
      expect(((await me.json()) as AccountBody).id).toBe(user.accountId);

      const listed = await admin(`/v1/admin/accounts/${user.accountId}/keys`);
      const list = (await listed.json()) as { data: KeyBody[] };
      expect(list.data.map((entry) => entry.id)).toEqual(
        expect.arrayContaining([user.keyId, key.id]),
      );
      expect(JSON.stringify(list)).not.toContain(key.key);
    });

    it("accepts expires_at as Unix seconds and refuses nonsense", async () => {
      const seconds = Math.floor(Date.now() / 1000) + 3600;
      const response = await admin(`/v1/admin/accounts/${user.accountId}/keys`, {
        json: { expires_at: seconds },
      });
      expect(response.status).toBe(201);
      expect(((await response.json()) as KeyBody).expires_at).toBe(
        new Date(seconds * 1000).toISOString(),
      );
      await expectGatewayError(
        await admin(`/v1/admin/accounts/${user.accountId}/keys`, { json: { expires_at: "soon" } }),
        {
          status: 400,
          type: "invalid_request_error",
          code: "invalid_parameter",
          param: "expires_at",
        },
      );
      await expectGatewayError(
        await admin(`/v1/admin/accounts/${user.accountId}/keys`, { json: { rpm: 0 } }),
        { status: 400, type: "invalid_request_error", code: "invalid_parameter", param: "rpm" },
      );
    });

    it("revokes a key at once, and revoking again changes nothing", async () => {
      const target = await createUser(gateway);
      expect((await gateway.request("/v1/models", { key: target.key })).status).toBe(200);
      const first = await admin(`/v1/admin/keys/${target.keyId}/revoke`, { method: "POST" });
      expect(first.status).toBe(200);
      const revoked = (await first.json()) as KeyBody;
      expect(revoked).toMatchObject({ id: target.keyId, revoked: true });
      expect(revoked.revoked_at).not.toBeNull();
      await expectInvalidKey(await gateway.request("/v1/models", { key: target.key }));

      const again = await admin(`/v1/admin/keys/${target.keyId}/revoke`, { method: "POST" });
      expect(again.status).toBe(200);
      expect(((await again.json()) as KeyBody).revoked_at).toBe(revoked.revoked_at);

      await expectGatewayError(await admin("/v1/admin/keys/key_nope/revoke", { method: "POST" }), {
        status: 404,
        type: "invalid_request_error",
        code: "key_not_found",
      });
    });
  });

  describe("credits and debits", () => {
    it("moves the balance through the ledger and the user sees it", async () => {
      const target = await createUser(gateway, { balanceMicros: 1_000_000 });
      const credit = await admin(`/v1/admin/accounts/${target.accountId}/credit`, {
        json: { amount_micros: 2_000_000, reason: "invoice 42 paid" },
      });
      expect(credit.status).toBe(200);
      const entry = (await credit.json()) as Record<string, unknown>;
      expect(entry).toMatchObject({
        object: "ledger_entry",
        account_id: target.accountId,
        kind: "credit",
        amount_micros: 2_000_000,
        balance_micros: 3_000_000,
      });
      expect(entry.reason).toContain("invoice 42 paid");

      const debit = await admin(`/v1/admin/accounts/${target.accountId}/credit`, {
        json: { amount_micros: -750_000, reason: "refund reversed" },
      });
      expect(debit.status).toBe(200);
      expect(await debit.json()).toMatchObject({
        kind: "debit",
        amount_micros: -750_000,
        balance_micros: 2_250_000,
      });

      const me = await gateway.request("/v1/account", { key: target.key });
      expect(await me.json()).toMatchObject({
        id: target.accountId,
        balance_micros: 2_250_000,
        balance_usd: "2.250000",
      });
      const listed = await admin("/v1/admin/accounts?limit=500");
      const accounts = ((await listed.json()) as { data: AccountBody[] }).data;
      expect(accounts.find((account) => account.id === target.accountId)?.balance_micros).toBe(
        2_250_000,
      );
    });

    it("keeps balances within billing.max_balance_micros and debits within what is available", async () => {
      const MAX = 1_000_000_000_000_000; // the default maximum
      const target = await createUser(gateway, { balanceMicros: 1_000_000 });
      const path = `/v1/admin/accounts/${target.accountId}/credit`;
      // Repeated credits at the schema's largest amount used to overflow the balance.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await expectGatewayError(
          await admin(path, { json: { amount_micros: Number.MAX_SAFE_INTEGER, reason: "x" } }),
          { status: 400, type: "invalid_request_error", code: "balance_limit_exceeded" },
        );
      }
      const fill = await admin(path, { json: { amount_micros: MAX - 1_000_000, reason: "fill" } });
      expect(await fill.json()).toMatchObject({ balance_micros: MAX });
      await expectGatewayError(await admin(path, { json: { amount_micros: 1, reason: "one" } }), {
        status: 400,
        type: "invalid_request_error",
        code: "balance_limit_exceeded",
        param: "amount_micros",
      });
      await expectGatewayError(
        await admin(path, { json: { amount_micros: -MAX - 1, reason: "too much" } }),
        {
          status: 400,
          type: "invalid_request_error",
          code: "debit_exceeds_available",
          param: "amount_micros",
        },
      );
      const drain = await admin(path, { json: { amount_micros: -MAX, reason: "all of it" } });
      expect(await drain.json()).toMatchObject({ kind: "debit", balance_micros: 0 });

      const email = `rich-${Date.now()}@example.com`;
      await expectGatewayError(
        await admin("/v1/admin/accounts", { json: { email, balance_micros: MAX + 1 } }),
        {
          status: 400,
          type: "invalid_request_error",
          code: "balance_limit_exceeded",
          param: "balance_micros",
        },
      );
      const listed = await admin("/v1/admin/accounts?limit=500");
      const emails = ((await listed.json()) as { data: AccountBody[] }).data.map((a) => a.email);
      expect(emails).not.toContain(email);
      expect(await gateway.services.store.verify()).toMatchObject({ problems: [] });
    });

    it("validates the amount and the reason", async () => {
      const path = `/v1/admin/accounts/${user.accountId}/credit`;
      const invalid = { status: 400, type: "invalid_request_error" } as const;
      await expectGatewayError(await admin(path, { json: { amount_micros: 0, reason: "noop" } }), {
        ...invalid,
        code: "invalid_parameter",
        param: "amount_micros",
      });
      await expectGatewayError(
        await admin(path, { json: { amount_micros: 1.5, reason: "half" } }),
        {
          ...invalid,
          code: "invalid_parameter",
          param: "amount_micros",
        },
      );
      await expectGatewayError(
        await admin(path, { json: { amount_micros: 1e300, reason: "huge" } }),
        {
          ...invalid,
          code: "invalid_parameter",
          param: "amount_micros",
        },
      );
      await expectGatewayError(await admin(path, { json: { amount_micros: 100 } }), {
        ...invalid,
        code: "missing_parameter",
        param: "reason",
      });
      await expectGatewayError(await admin(path, { json: { amount_micros: 100, reason: "" } }), {
        ...invalid,
        code: "invalid_parameter",
        param: "reason",
      });
      const me = await gateway.request("/v1/account", { key: user.key });
      expect(await me.json()).toMatchObject({ balance_micros: 1_000_000 });
    });
  });

  it("answers 404 account_not_found for an unknown account", async () => {
    for (const [method, path, json] of [
      ["GET", "/v1/admin/accounts/acct_missing/keys", undefined],
      ["POST", "/v1/admin/accounts/acct_missing/keys", {}],
      ["POST", "/v1/admin/accounts/acct_missing/credit", { amount_micros: 5, reason: "x" }],
    ] as const) {
      const error = await expectGatewayError(
        await admin(path, { method, ...(json ? { json } : {}) }),
        { status: 404, type: "invalid_request_error", code: "account_not_found" },
      );
      expect(error.message).toContain("acct_missing");
    }
  });
});
