/**
 * The audit trail through the HTTP API: every admin and account-management action appears in
 * `GET /v1/admin/audit` with its actor and before/after, no secret ever does, only admins may
 * read it, and paging returns each event exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface AuditItem {
  id: string;
  object: string;
  created_at: string;
  action: string;
  actor: {
    type: string;
    account_id: string | null;
    key_id: string | null;
    role: string | null;
    ip: string | null;
  };
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  reason: string | null;
  request_id: string | null;
}

interface AuditPage {
  object: string;
  data: AuditItem[];
  has_more: boolean;
  next_cursor: string | null;
}

const PASSWORD = "correct-horse-battery-staple";

describe("the audit trail", () => {
  let gateway: TestGateway;
  let adminAccount: string;
  let adminKeyId: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { registration: { enabled: true }, webhooks: { allow_loopback: true } },
    });
    const me = await gateway.request("/v1/account", { key: gateway.adminKey });
    adminAccount = ((await me.json()) as { id: string }).id;
    const keys = await gateway.request("/v1/account/keys", { key: gateway.adminKey });
    adminKeyId = ((await keys.json()) as { data: Array<{ id: string }> }).data[0]!.id;
  });
  afterAll(() => gateway?.close());

  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });

  async function audit(query = ""): Promise<{ page: AuditPage; text: string }> {
    const response = await admin(`/v1/admin/audit${query}`);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return { page: JSON.parse(text) as AuditPage, text };
  }

  it("records each admin action with its actor, target and before/after, and no secret", async () => {
    const created = await admin("/v1/admin/accounts", {
      json: { email: `audited-${Date.now()}@example.com`, password: PASSWORD, balance_micros: 500 },
    });
    expect(created.status).toBe(201);
    const account = ((await created.json()) as { id: string }).id;

    const credit = await admin(`/v1/admin/accounts/${account}/credit`, {
      json: { amount_micros: 2_000_000, reason: "invoice 42 paid" },
    });
    expect(credit.status).toBe(200);
    const creditRequestId = credit.headers.get("x-request-id");
    const debit = await admin(`/v1/admin/accounts/${account}/credit`, {
      json: { amount_micros: -300, reason: "goodwill reversal" },
    });
    expect(debit.status).toBe(200);

    const keyResponse = await admin(`/v1/admin/accounts/${account}/keys`, {
      json: { name: "ci", rpm: 60 },
    });
    expect(keyResponse.status).toBe(201);
    const issued = (await keyResponse.json()) as { id: string; key: string };

    // The user rotates the webhook secret with the new key: the actor is that key.
    const rotated = await gateway.request("/v1/account/webhook-secret/rotate", {
      key: issued.key,
      method: "POST",
    });
    expect(rotated.status).toBe(200);
    const { secret } = (await rotated.json()) as { secret: string };

    const revoked = await admin(`/v1/admin/keys/${issued.id}/revoke`, { method: "POST" });
    expect(revoked.status).toBe(200);

    const { page, text } = await audit(`?target=${account}`);
    const { page: keyPage, text: keyText } = await audit(`?target=${issued.id}`);
    const byAction = new Map(
      [...page.data, ...keyPage.data].map((event) => [event.action, event] as const),
    );
    const adminActor = {
      type: "key",
      account_id: adminAccount,
      key_id: adminKeyId,
      role: "admin",
      ip: "127.0.0.1",
    };

    expect(byAction.get("account.create")).toMatchObject({
      object: "audit_event",
      actor: adminActor,
      target: { type: "account", id: account },
      before: null,
      after: { role: "user", has_password: true },
    });
    expect(
      page.data.filter((event) => event.action === "account.credit").map((e) => e.after),
    ).toEqual([
      { balance_micros: 2_000_500, amount_micros: 2_000_000, ledger_entry_id: expect.any(String) },
      { balance_micros: 500, amount_micros: 500, ledger_entry_id: expect.any(String) },
    ]);
    const creditEvent = page.data.find(
      (event) => event.action === "account.credit" && event.reason === "invoice 42 paid",
    );
    expect(creditEvent).toMatchObject({
      actor: adminActor,
      before: { balance_micros: 500 },
      request_id: creditRequestId,
    });
    expect(byAction.get("account.debit")).toMatchObject({
      actor: adminActor,
      reason: "goodwill reversal",
      before: { balance_micros: 2_000_500 },
      after: { balance_micros: 2_000_200, amount_micros: -300 },
    });
    expect(byAction.get("key.create")).toMatchObject({
      actor: adminActor,
      target: { type: "api_key", id: issued.id },
      after: { account_id: account, name: "ci", rpm: 60 },
    });
    expect(byAction.get("key.revoke")).toMatchObject({
      actor: adminActor,
      before: { revoked_at: null },
      after: { revoked_key_ids: [issued.id] },
    });
    expect(byAction.get("webhook_secret.rotate")).toMatchObject({
      actor: { type: "key", account_id: account, key_id: issued.id, role: "user" },
      target: { type: "webhook_secret", id: account },
      before: null,
    });
    expect(Date.parse(byAction.get("key.revoke")!.created_at)).toBeGreaterThan(Date.now() - 60_000);

    // Newest first.
    const times = page.data.map((event) => Date.parse(event.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    // No secret anywhere: not the issued key, its hash, the password or the webhook secret.
    const { text: everything } = await audit("?limit=1000");
    for (const body of [text, keyText, everything]) {
      expect(body).not.toContain(issued.key);
      expect(body).not.toContain(PASSWORD);
      expect(body).not.toContain(secret);
      expect(body).not.toContain(gateway.adminKey);
      expect(body).not.toMatch(/key_hash|password_hash|token_hash|"secret"/);
    }
  });

  it("records registration, login and self-service keys without the password, key or token", async () => {
    const email = `self-${Date.now()}@example.com`;
    const registered = await gateway.request("/v1/account/register", {
      json: { email, password: PASSWORD },
    });
    expect(registered.status).toBe(201);
    const { account, key } = (await registered.json()) as { account: { id: string }; key: string };
    const login = await gateway.request("/v1/account/login", {
      json: { email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const minted = await gateway.request("/v1/account/keys", {
      key: token,
      json: { name: "from-session" },
    });
    expect(minted.status).toBe(201);
    const mintedKey = (await minted.json()) as { id: string; key: string };
    // A key may revoke itself.
    const dropped = await gateway.request(`/v1/account/keys/${mintedKey.id}`, {
      key: mintedKey.key,
      method: "DELETE",
    });
    expect(dropped.status).toBe(200);

    const { page, text } = await audit(`?actor=${account.id}`);
    expect(page.data.map((event) => event.action).sort()).toEqual([
      "account.login",
      "key.create",
      "key.revoke",
    ]);
    const login_ = page.data.find((event) => event.action === "account.login")!;
    expect(login_.actor).toMatchObject({ type: "password", account_id: account.id, key_id: null });
    const sessionMint = page.data.find((event) => event.action === "key.create")!;
    expect(sessionMint.actor).toMatchObject({ type: "session", key_id: null, role: "user" });
    const revoke = page.data.find((event) => event.action === "key.revoke")!;
    expect(revoke.actor).toMatchObject({
      type: "key",
      account_id: account.id,
      key_id: mintedKey.id,
    });

    const { page: targeted, text: targetText } = await audit(`?target=${account.id}`);
    expect(targeted.data.find((event) => event.action === "account.register")).toMatchObject({
      actor: { type: "anonymous", account_id: null, ip: "127.0.0.1" },
      after: { role: "user", has_password: true },
    });
    for (const body of [text, targetText]) {
      for (const secret of [PASSWORD, key, token, mintedKey.key])
        expect(body).not.toContain(secret);
    }
  });

  it("records the first admin, made at first start, with the gateway as actor", async () => {
    const { page } = await audit(`?target=${adminAccount}`);
    expect(page.data.map((event) => [event.action, event.actor.type])).toContainEqual([
      "account.create",
      "system",
    ]);
    const { page: keyPage, text } = await audit(`?target=${adminKeyId}`);
    expect(keyPage.data[0]).toMatchObject({ action: "key.create", actor: { type: "system" } });
    expect(text).not.toContain(gateway.adminKey);
  });

  it("filters by action and time", async () => {
    const { page } = await audit("?action=account.debit");
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((event) => event.action === "account.debit")).toBe(true);
    const future = Math.floor(Date.now() / 1000) + 3600;
    expect((await audit(`?from=${future}`)).page.data).toEqual([]);
    expect((await audit("?to=2000-01-01T00:00:00Z")).page.data).toEqual([]);
    const all = (await audit("?from=2000-01-01T00:00:00Z&limit=1000")).page.data;
    expect(all.length).toBe((await audit("?limit=1000")).page.data.length);
    await expectGatewayError(await admin("/v1/admin/audit?from=yesterday"), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "from",
    });
  });

  it("pages through many events, each exactly once, newest first", async () => {
    const { accountId } = await createUser(gateway, { balanceMicros: 0 });
    const credits = 23;
    for (let i = 0; i < credits; i++) {
      const response = await admin(`/v1/admin/accounts/${accountId}/credit`, {
        json: { amount_micros: i + 1, reason: `page ${i}` },
      });
      expect(response.status).toBe(200);
    }
    const { page: whole } = await audit(`?target=${accountId}&action=account.credit&limit=1000`);
    expect(whole.data).toHaveLength(credits);
    expect(whole.has_more).toBe(false);
    expect(whole.next_cursor).toBeNull();

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query = `?target=${accountId}&action=account.credit&limit=5${cursor ? `&cursor=${cursor}` : ""}`;
      const { page } = await audit(query);
      expect(page.object).toBe("list");
      seen.push(...page.data.map((event) => event.id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual(whole.data.map((event) => event.id));
    expect(new Set(seen).size).toBe(credits);
    // Newest first: the last credit made is the first listed.
    expect(whole.data[0]!.reason).toBe(`page ${credits - 1}`);

    await expectGatewayError(await admin("/v1/admin/audit?cursor=not-a-cursor"), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_request",
      param: "cursor",
    });
    await expectGatewayError(await admin("/v1/admin/audit?limit=1001"), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
    });
  });

  it("is for admins only", async () => {
    const user = await createUser(gateway);
    await expectGatewayError(await gateway.request("/v1/admin/audit", { key: user.key }), {
      status: 403,
      type: "permission_error",
      code: "admin_required",
    });
    await expectInvalidKey(await gateway.request("/v1/admin/audit"));
  });

  it("writes no event for a refused change", async () => {
    const { accountId } = await createUser(gateway, { balanceMicros: 100 });
    const before = (await audit(`?target=${accountId}&limit=1000`)).page.data.length;
    const refused = await admin(`/v1/admin/accounts/${accountId}/credit`, {
      json: { amount_micros: -1_000, reason: "too much" },
    });
    expect(refused.status).toBe(400);
    expect((await audit(`?target=${accountId}&limit=1000`)).page.data).toHaveLength(before);
  });

  it("records a configuration reload with the signal as actor", async () => {
    const outcome = gateway.reload();
    expect(outcome).toBeDefined();
    let events: AuditItem[] = [];
    for (let attempt = 0; attempt < 50 && events.length === 0; attempt++) {
      events = (await audit("?action=config.reload")).page.data;
      if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(events[0]).toMatchObject({
      actor: { type: "signal", account_id: null },
      target: { type: "config", id: null },
      reason: "SIGHUP",
      after: { changes: expect.any(Array), needs_restart: expect.any(Array) },
    });
  });

  it("records credit codes made, revoked and redeemed, and never the code", async () => {
    const made = await admin("/v1/admin/credit-codes", {
      json: { amount_micros: 3_000_000, count: 2, note: "promo" },
    });
    expect(made.status).toBe(201);
    const [kept, dropped] = ((await made.json()) as { data: Array<{ id: string; code: string }> })
      .data;
    expect(
      (await admin(`/v1/admin/credit-codes/${dropped!.id}/revoke`, { method: "POST" })).status,
    ).toBe(200);
    const user = await createUser(gateway, { balanceMicros: 1_000 });
    const redeemed = await gateway.request("/v1/account/credit-codes/redeem", {
      key: user.key,
      json: { code: kept!.code },
    });
    expect(redeemed.status).toBe(200);

    const { page, text } = await audit(`?target=${kept!.id}`);
    expect(page.data.map((event) => event.action)).toEqual([
      "credit_code.redeem",
      "credit_code.create",
    ]);
    expect(page.data[0]).toMatchObject({
      actor: { type: "key", account_id: user.accountId, key_id: user.keyId },
      before: { status: "active", balance_micros: 1_000 },
      after: { status: "redeemed", balance_micros: 3_001_000 },
    });
    expect(page.data[1]).toMatchObject({
      actor: { account_id: adminAccount, key_id: adminKeyId },
      after: { amount_micros: 3_000_000, note: "promo" },
    });
    const revoked = (await audit(`?target=${dropped!.id}`)).page.data[0];
    expect(revoked).toMatchObject({ action: "credit_code.revoke", after: { status: "revoked" } });
    for (const secret of [kept!.code, dropped!.code]) expect(text).not.toContain(secret);
  });
  it("records budget changes by the account and by an admin, before and after", async () => {
    const user = await createUser(gateway);
    const url = "http://127.0.0.1:9/budget";
    const set = await gateway.request("/v1/account/budget", {
      key: user.key,
      method: "PATCH",
      json: { monthly_budget_micros: 5_000_000, webhook_url: url },
    });
    expect(set.status, await set.clone().text()).toBe(200);
    const changed = await admin(`/v1/admin/accounts/${user.accountId}/budget`, {
      method: "PATCH",
      json: { monthly_budget_micros: null, webhook_url: null },
    });
    expect(changed.status).toBe(200);
    // An empty URL is refused like any bad URL, and records nothing.
    const empty = await gateway.request("/v1/account/budget", {
      key: user.key,
      method: "PATCH",
      json: { monthly_budget_micros: 1_000, webhook_url: "" },
    });
    expect(empty.status).toBe(400);

    const { page } = await audit(`?action=budget.set&target=${user.accountId}`);
    expect(page.data).toHaveLength(2);
    expect(page.data[0]).toMatchObject({
      actor: { type: "key", account_id: adminAccount },
      target: { type: "account", id: user.accountId },
      before: { monthly_budget_micros: 5_000_000, webhook_url: url },
      after: null,
    });
    expect(page.data[1]).toMatchObject({
      actor: { type: "key", account_id: user.accountId, key_id: user.keyId },
      before: null,
      after: { monthly_budget_micros: 5_000_000, webhook_url: url },
    });
  });
});
