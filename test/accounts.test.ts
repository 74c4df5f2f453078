import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const CHAT = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] };
const PASSWORD = "a long enough password";

interface Registered {
  account: { id: string; object: string; email: string; role: string; balance_micros: number };
  key: string;
  api_key: { id: string; prefix: string; revoked: boolean };
}

let counter = 0;
function uniqueEmail(): string {
  counter += 1;
  return `person-${counter}-${Date.now()}@example.com`;
}

async function register(gateway: TestGateway, email = uniqueEmail(), password = PASSWORD) {
  return gateway.request("/v1/account/register", { json: { email, password } });
}

async function login(gateway: TestGateway, email: string, password = PASSWORD) {
  return gateway.request("/v1/account/login", { json: { email, password } });
}

describe("self-service accounts", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  describe("registration", () => {
    it("creates an account and a working key shown once", async () => {
      const email = uniqueEmail();
      const response = await register(gateway, email);
      expect(response.status).toBe(201);
      const body = (await response.json()) as Registered;
      expect(body.account).toMatchObject({
        object: "account",
        email,
        role: "user",
        balance_micros: 0,
      });
      expect(body.account.id).toMatch(/^acct_/);
      expect(body.key).toMatch(/^sk-[0-9A-Za-z]{40,}$/);
      expect(body.api_key).toMatchObject({ prefix: `${body.key.slice(0, 7)}…`, revoked: false });

      const models = await gateway.request("/v1/models", { key: body.key });
      expect(models.status).toBe(200);
      const me = await gateway.request("/v1/account", { key: body.key });
      expect(await me.json()).toMatchObject({ id: body.account.id, email, balance_micros: 0 });

      const keys = await gateway.request("/v1/account/keys", { key: body.key });
      const list = (await keys.json()) as { data: Record<string, unknown>[] };
      expect(list.data).toHaveLength(1);
      expect(list.data[0]).toMatchObject({ id: body.api_key.id, account_id: body.account.id });
      expect(list.data[0]).not.toHaveProperty("key");
      expect(JSON.stringify(list)).not.toContain(body.key);
    });

    it("refuses a second account with the same email, whatever its case", async () => {
      const email = uniqueEmail();
      expect((await register(gateway, email)).status).toBe(201);
      await expectGatewayError(await register(gateway, email), {
        status: 409,
        type: "invalid_request_error",
        code: "account_exists",
      });
      await expectGatewayError(await register(gateway, email.toUpperCase()), {
        status: 409,
        type: "invalid_request_error",
        code: "account_exists",
      });
    });

    it("lets only one of two simultaneous registrations of an email through", async () => {
      const email = uniqueEmail();
      const responses = await Promise.all([register(gateway, email), register(gateway, email)]);
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 409]);
      const conflict = responses.find((response) => response.status === 409)!;
      await expectGatewayError(conflict, {
        status: 409,
        type: "invalid_request_error",
        code: "account_exists",
      });
    });

    it("validates the email and the password", async () => {
      await expectGatewayError(await register(gateway, "not-an-email"), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "email",
      });
      await expectGatewayError(await register(gateway, uniqueEmail(), "short"), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "password",
      });
      const missing = await gateway.request("/v1/account/register", {
        json: { email: uniqueEmail() },
      });
      await expectGatewayError(missing, {
        status: 400,
        type: "invalid_request_error",
        code: "missing_parameter",
        param: "password",
      });
      const extra = await gateway.request("/v1/account/register", {
        json: { email: uniqueEmail(), password: PASSWORD, role: "admin" },
      });
      await expectGatewayError(extra, {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "role",
      });
    });
  });

  describe("login sessions", () => {
    let email: string;
    let key: string;
    let token: string;

    beforeAll(async () => {
      email = uniqueEmail();
      key = ((await (await register(gateway, email)).json()) as Registered).key;
      const response = await login(gateway, email);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ token_type: "bearer", expires_in: 3600 });
      expect(Date.parse(body.expires_at as string) - Date.now()).toBeGreaterThan(3_500_000);
      token = body.token as string;
      expect(token).toMatch(/^sess_[0-9A-Za-z]{40}$/);
    });

    it("works on the account endpoints", async () => {
      const me = await gateway.request("/v1/account", { key: token });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ email, role: "user" });

      const keys = await gateway.request("/v1/account/keys", { key: token });
      expect(keys.status).toBe(200);
      expect(((await keys.json()) as { data: unknown[] }).data).toHaveLength(1);

      const created = await gateway.request("/v1/account/keys", {
        key: token,
        json: { name: "from a session", rpm: 30 },
      });
      expect(created.status).toBe(201);
      const newKey = (await created.json()) as { key: string; name: string; rpm: number };
      expect(newKey).toMatchObject({ name: "from a session", rpm: 30 });
      expect((await gateway.request("/v1/models", { key: newKey.key })).status).toBe(200);

      const after = await gateway.request("/v1/account/keys", { key: token });
      expect(((await after.json()) as { data: unknown[] }).data).toHaveLength(2);
    });

    it("does not call the model APIs, but reads the model list", async () => {
      await expectInvalidKey(
        await gateway.request("/v1/chat/completions", { key: token, json: CHAT }),
      );
      await expectInvalidKey(
        await gateway.request("/v1/billing/quote", { key: token, json: CHAT }),
      );
      expect((await gateway.request("/v1/models", { key: token })).status).toBe(200);
      expect((await gateway.request("/v1/models/gpt-4o", { key: token })).status).toBe(200);
      // A user's session is a user's: the admin API stays closed.
      await expectGatewayError(await gateway.request("/v1/admin/accounts", { key: token }), {
        status: 403,
        type: "permission_error",
        code: "admin_required",
      });
      // The account's key still calls models.
      expect((await gateway.request("/v1/models", { key })).status).toBe(200);
    });

    it("refuses a made-up session token", async () => {
      await expectInvalidKey(
        await gateway.request("/v1/account", { key: `sess_${"x".repeat(40)}` }),
      );
    });

    it("refuses an expired session", async () => {
      const realNow = gateway.services.now;
      gateway.services.now = () => realNow() - 2 * 3600 * 1000;
      let stale: string;
      try {
        stale = ((await (await login(gateway, email)).json()) as { token: string }).token;
      } finally {
        gateway.services.now = realNow;
      }
      await expectInvalidKey(await gateway.request("/v1/account", { key: stale }));
    });

    it("answers 401 invalid_credentials for a wrong password or an unknown email", async () => {
      await expectGatewayError(await login(gateway, email, "the wrong password"), {
        status: 401,
        type: "invalid_request_error",
        code: "invalid_credentials",
      });
      await expectGatewayError(await login(gateway, uniqueEmail()), {
        status: 401,
        type: "invalid_request_error",
        code: "invalid_credentials",
      });
    });

    it("refuses to log in to an account created without a password", async () => {
      const passwordless = uniqueEmail();
      const created = await gateway.request("/v1/admin/accounts", {
        key: gateway.adminKey,
        json: { email: passwordless },
      });
      expect(created.status).toBe(201);
      await expectGatewayError(await login(gateway, passwordless), {
        status: 401,
        type: "invalid_request_error",
        code: "invalid_credentials",
      });
    });
  });
});

describe("registration settings", () => {
  it("answers 403 registration_disabled when registration is off", async () => {
    const gateway = await startTestGateway({
      config: { registration: { enabled: false, signup_credit_micros: 0 } },
    });
    try {
      await expectGatewayError(await register(gateway), {
        status: 403,
        type: "permission_error",
        code: "registration_disabled",
      });
      // Operators can still create accounts.
      const created = await gateway.request("/v1/admin/accounts", {
        key: gateway.adminKey,
        json: { email: uniqueEmail(), password: PASSWORD },
      });
      expect(created.status).toBe(201);
    } finally {
      await gateway.close();
    }
  });

  it("credits the configured signup credit", async () => {
    const gateway = await startTestGateway({
      config: { registration: { enabled: true, signup_credit_micros: 5_000_000 } },
    });
    try {
      const response = await register(gateway);
      expect(response.status).toBe(201);
      const body = (await response.json()) as Registered;
      expect(body.account.balance_micros).toBe(5_000_000);
      const me = await gateway.request("/v1/account", { key: body.key });
      expect(await me.json()).toMatchObject({ balance_micros: 5_000_000, balance_usd: "5.000000" });
    } finally {
      await gateway.close();
    }
  });
});
