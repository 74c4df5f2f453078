/**
 * An account's own keys and sessions against a hostile user. Every key stays listed (revoked
 * ones too) and a listing reads the account's whole set, so 50,000 keys made one
 * `GET /v1/account/keys?limit=1` hold the event loop for most of a second, for every client of
 * the gateway, and hid the newest keys from the console: an account now creates at most
 * `auth.max_keys_per_account` keys itself (an administrator can still create more for it). A key
 * name with a newline or a right-to-left override read as something else in the console's
 * revoke prompt: refused. Expired log-in sessions were never deleted: each log-in clears them.
 */

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountWithPassword, PASSWORD } from "./support/console-accounts.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe("keys an account creates itself", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ config: { auth: { max_keys_per_account: 3 } } });
  });
  afterAll(() => gateway?.close());

  it("stop at auth.max_keys_per_account, revoked ones included; an admin can add more", async () => {
    const user = await createUser(gateway); // its first key
    const create = () =>
      gateway.request("/v1/account/keys", { key: user.key, json: { name: "more" } });
    const second = (await (await create()).json()) as { id: string };
    expect((await create()).status).toBe(201);
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "key_limit_reached",
    );
    // Revoking does not make room: the revoked key is still listed.
    const revoked = await gateway.request(`/v1/account/keys/${second.id}`, {
      key: user.key,
      method: "DELETE",
    });
    expect(revoked.status).toBe(200);
    expect((await create()).status).toBe(409);
    const listed = (await (
      await gateway.request("/v1/account/keys", { key: user.key })
    ).json()) as { data: unknown[] };
    expect(listed.data).toHaveLength(3);
    // The operator is not limited.
    const byAdmin = await gateway.request(`/v1/admin/accounts/${user.accountId}/keys`, {
      key: gateway.adminKey,
      json: { name: "from the operator" },
    });
    expect(byAdmin.status).toBe(201);
  });

  it("refuse names with control or bidirectional formatting characters", async () => {
    const user = await createUser(gateway);
    for (const name of ["ci\nrevoked: prod", "\u202Edorp", "tab\there", "\u2066x\u2069"]) {
      const refused = await gateway.request("/v1/account/keys", { key: user.key, json: { name } });
      expect(refused.status, JSON.stringify(name)).toBe(400);
      const body = (await refused.json()) as { error: { code: string; param: string } };
      expect(body.error).toMatchObject({ code: "invalid_parameter", param: "name" });
    }
    const plain = await gateway.request("/v1/account/keys", {
      key: user.key,
      json: { name: "prod — 東京 ✓" },
    });
    expect(plain.status).toBe(201);
  });

  it("clear expired log-in sessions at each log-in", async () => {
    const user = await accountWithPassword(gateway);
    const stale = createHash("sha256").update("an old session").digest("hex");
    await gateway.services.store.createSession({
      tokenHash: stale,
      accountId: user.id,
      expiresAt: Date.now() - 1_000,
    });
    expect(await gateway.services.store.findSession(stale)).toBeDefined();
    const login = await gateway.request("/v1/account/login", {
      json: { email: user.email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
    expect(await gateway.services.store.findSession(stale)).toBeUndefined();
  });
});
