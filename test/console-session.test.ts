/**
 * The web console's cookie session: login sets an HttpOnly, SameSite=Strict cookie and answers
 * no token; the cookie counts only with the `x-switchyard-console: 1` header (a cross-site form
 * cannot send it); it reaches the account routes, and the admin routes for an admin only; it
 * never calls a model; logout ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountWithPassword, PASSWORD } from "./support/console-accounts.ts";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const CONSOLE = { "x-switchyard-console": "1" };

/** Logs in for a cookie; returns the `name=value` pair and the whole Set-Cookie header. */
async function cookieLogin(gateway: TestGateway, email: string, headers: HeadersInit = {}) {
  const response = await gateway.request("/v1/account/login", {
    json: { email, password: PASSWORD, session: "cookie" },
    headers,
  });
  expect(response.status).toBe(200);
  const setCookie = response.headers.get("set-cookie") ?? "";
  const pair = setCookie.split(";")[0]!;
  return { response, setCookie, pair, body: await response.text() };
}

describe("console cookie sessions", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ config: { server: { trust_proxy: true } } });
  });
  afterAll(() => gateway.close());

  it("sets an HttpOnly SameSite=Strict cookie and answers no token", async () => {
    const { email, id } = await accountWithPassword(gateway, "user");
    const { setCookie, pair, body } = await cookieLogin(gateway, email);
    expect(setCookie).toMatch(
      /^switchyard_session=sess_[0-9A-Za-z]{40}; HttpOnly; SameSite=Strict; Path=\/v1; Max-Age=3600$/,
    );
    const token = pair.split("=")[1]!;
    expect(body).not.toContain(token);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(parsed).not.toHaveProperty("token");
    expect(parsed).toMatchObject({
      token_type: "cookie",
      expires_in: 3600,
      account: { id, object: "account", email, role: "user", balance_micros: 5_000_000 },
    });
    expect(Date.parse(parsed.expires_at as string)).toBeGreaterThan(Date.now());
  });

  it("marks the cookie Secure when the request came over HTTPS through a trusted proxy", async () => {
    const { email } = await accountWithPassword(gateway, "user");
    const { setCookie } = await cookieLogin(gateway, email, { "x-forwarded-proto": "https" });
    expect(setCookie).toMatch(/; Secure$/);
  });

  it("counts only with the console header, then reaches the account routes", async () => {
    const { email, id } = await accountWithPassword(gateway, "user");
    const { pair } = await cookieLogin(gateway, email);
    await expectInvalidKey(await gateway.request("/v1/account", { headers: { cookie: pair } }));
    await expectInvalidKey(
      await gateway.request("/v1/account", {
        headers: { cookie: pair, "x-switchyard-console": "true" },
      }),
    );
    const headers = { cookie: `theme=dark; ${pair}; other=1`, ...CONSOLE };
    const me = await gateway.request("/v1/account", { headers });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id, email });
    for (const path of [
      "/v1/account/balance",
      "/v1/account/keys",
      "/v1/account/usage",
      "/v1/account/ledger",
      "/v1/models",
      "/v1/models/gpt-4o-mini",
      "/v1/videos/generations",
    ]) {
      const response = await gateway.request(path, { headers });
      expect(response.status, path).toBe(200);
      await response.arrayBuffer();
    }
    const key = await gateway.request("/v1/account/keys", {
      headers,
      json: { name: "made in the console" },
    });
    expect(key.status).toBe(201);
    expect(await key.json()).toMatchObject({ name: "made in the console", account_id: id });
    await expectGatewayError(
      await gateway.request("/v1/videos/generations/vtask_none", { headers }),
      { status: 404, type: "invalid_request_error", code: "task_not_found" },
    );
  });

  it("never calls a model or prices a request", async () => {
    const { email } = await accountWithPassword(gateway, "user");
    const { pair } = await cookieLogin(gateway, email);
    const headers = { cookie: pair, ...CONSOLE };
    const chat = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] };
    await expectInvalidKey(await gateway.request("/v1/chat/completions", { headers, json: chat }));
    await expectInvalidKey(await gateway.request("/v1/billing/quote", { headers, json: chat }));
    const token = pair.split("=")[1]!;
    await expectInvalidKey(
      await gateway.request("/v1/chat/completions", { key: token, json: chat }),
    );
  });

  it("takes an admin's cookie on the admin routes and refuses a user's", async () => {
    const admin = await accountWithPassword(gateway, "admin");
    const user = await accountWithPassword(gateway, "user");
    const adminCookie = (await cookieLogin(gateway, admin.email)).pair;
    const userCookie = (await cookieLogin(gateway, user.email)).pair;
    const asAdmin = await gateway.request("/v1/admin/accounts", {
      headers: { cookie: adminCookie, ...CONSOLE },
    });
    expect(asAdmin.status).toBe(200);
    await asAdmin.arrayBuffer();
    await expectGatewayError(
      await gateway.request("/v1/admin/accounts", { headers: { cookie: userCookie, ...CONSOLE } }),
      { status: 403, type: "permission_error", code: "admin_required" },
    );
    await expectInvalidKey(
      await gateway.request("/v1/admin/accounts", { headers: { cookie: adminCookie } }),
    );
    const codes = await gateway.request("/v1/admin/credit-codes", {
      headers: { cookie: adminCookie, ...CONSOLE },
      json: { amount_micros: 1_000 },
    });
    expect(codes.status).toBe(201);
  });

  it("logs out: the cookie is cleared and the session ends at once", async () => {
    const { email, id } = await accountWithPassword(gateway, "user");
    const { pair } = await cookieLogin(gateway, email);
    const headers = { cookie: pair, ...CONSOLE };
    const logout = await gateway.request("/v1/account/logout", { headers, method: "POST" });
    expect(logout.status).toBe(204);
    expect(logout.headers.get("set-cookie")).toMatch(
      /^switchyard_session=; HttpOnly; SameSite=Strict; Path=\/v1; Max-Age=0/,
    );
    await expectInvalidKey(await gateway.request("/v1/account", { headers }));
    const logouts = (await (
      await gateway.request("/v1/admin/audit?action=account.logout", { key: gateway.adminKey })
    ).json()) as { data: Array<{ target: { id: string } }> };
    expect(logouts.data.map((event) => event.target.id)).toContain(id);

    // A bearer session logs out the same way.
    const login = await gateway.request("/v1/account/login", {
      json: { email, password: PASSWORD },
    });
    const { token } = (await login.json()) as { token: string };
    expect((await gateway.request("/v1/account", { key: token })).status).toBe(200);
    const out = await gateway.request("/v1/account/logout", { key: token, method: "POST" });
    expect(out.status).toBe(204);
    await expectInvalidKey(await gateway.request("/v1/account", { key: token }));
  });
});
