import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const KEY_PATTERN = /^sk-[0-9A-Za-z]{40,}$/;
const CHAT = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] };

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The three kinds of protected path, each called with the given headers. */
function protectedCalls(gateway: TestGateway, headers: Record<string, string>) {
  return [
    () => gateway.request("/v1/models", { headers }),
    () =>
      gateway.request("/v1/chat/completions", {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(CHAT),
      }),
    () => gateway.request("/v1/account", { headers }),
    () => gateway.request("/v1/account/keys", { headers }),
    () => gateway.request("/v1/admin/accounts", { headers }),
  ];
}

async function expectRejectedEverywhere(gateway: TestGateway, headers: Record<string, string>) {
  for (const call of protectedCalls(gateway, headers)) await expectInvalidKey(await call());
}

async function expectAcceptedEverywhere(gateway: TestGateway, key: string) {
  const [models, chat, account] = protectedCalls(gateway, { authorization: `Bearer ${key}` });
  expect((await models!()).status).toBe(200);
  expect((await chat!()).status).toBe(200);
  expect((await account!()).status).toBe(200);
}

describe("authentication", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  describe("every failure is a 401 invalid_api_key with a Bearer challenge", () => {
    it("rejects a request without credentials", async () => {
      await expectRejectedEverywhere(gateway, {});
    });

    it("rejects a Basic authorization header", async () => {
      await expectRejectedEverywhere(gateway, { authorization: "Basic dXNlcjpwYXNzd29yZA==" });
    });

    it("rejects 'Bearer' with no token", async () => {
      await expectRejectedEverywhere(gateway, { authorization: "Bearer" });
      await expectRejectedEverywhere(gateway, { authorization: "Bearer    " });
    });

    it("rejects malformed keys", async () => {
      const valid = gateway.adminKey;
      for (const malformed of [
        "sk-short",
        `sk-${"a".repeat(39)}`,
        `pk-${valid.slice(3)}`,
        `${valid.slice(0, -1)}!`,
        `${valid.slice(0, 20)}-${valid.slice(20)}`,
        valid.slice(3),
      ]) {
        await expectRejectedEverywhere(gateway, { authorization: `Bearer ${malformed}` });
      }
    });

    it("rejects a well-formed key that was never issued", async () => {
      const unknown = `sk-${"Z".repeat(48)}`;
      expect(unknown).toMatch(KEY_PATTERN);
      await expectRejectedEverywhere(gateway, { authorization: `Bearer ${unknown}` });
    });

    it("rejects a revoked key", async () => {
      const user = await createUser(gateway);
      const revoke = await gateway.request(`/v1/admin/keys/${user.keyId}/revoke`, {
        key: gateway.adminKey,
        method: "POST",
      });
      expect(revoke.status).toBe(200);
      await expectRejectedEverywhere(gateway, { authorization: `Bearer ${user.key}` });
    });

    it("rejects a key whose expiry is in the past", async () => {
      const user = await createUser(gateway, {
        keyOptions: { expires_at: new Date(Date.now() - 60_000).toISOString() },
      });
      await expectRejectedEverywhere(gateway, { authorization: `Bearer ${user.key}` });
    });

    it("rejects a key that expires after it was used (and cached)", async () => {
      const expiresAt = Date.now() + 1_500;
      const user = await createUser(gateway, {
        keyOptions: { expires_at: new Date(expiresAt).toISOString() },
      });
      expect((await gateway.request("/v1/models", { key: user.key })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 100));
      await expectRejectedEverywhere(gateway, { authorization: `Bearer ${user.key}` });
    });

    it("rejects a bad key sent as x-api-key", async () => {
      await expectRejectedEverywhere(gateway, { "x-api-key": `sk-${"Q".repeat(48)}` });
      await expectRejectedEverywhere(gateway, { "x-api-key": "not-a-key" });
    });
  });

  it("accepts a key as a Bearer token, case-insensitively", async () => {
    const user = await createUser(gateway);
    await expectAcceptedEverywhere(gateway, user.key);
    const lower = await gateway.request("/v1/models", {
      headers: { authorization: `bearer ${user.key}` },
    });
    expect(lower.status).toBe(200);
  });

  it("accepts a key in x-api-key (Anthropic clients)", async () => {
    const user = await createUser(gateway);
    const headers = { "x-api-key": user.key };
    const models = await gateway.request("/v1/models", { headers });
    expect(models.status).toBe(200);
    const chat = await gateway.request("/v1/chat/completions", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(CHAT),
    });
    expect(chat.status).toBe(200);
    const account = await gateway.request("/v1/account", { headers });
    expect(account.status).toBe(200);
    expect(((await account.json()) as { id: string }).id).toBe(user.accountId);
  });

  describe("revocation takes effect on the very next request", () => {
    it("through POST /v1/admin/keys/{id}/revoke", async () => {
      const user = await createUser(gateway);
      await expectAcceptedEverywhere(gateway, user.key);
      const revoke = await gateway.request(`/v1/admin/keys/${user.keyId}/revoke`, {
        key: gateway.adminKey,
        method: "POST",
      });
      expect(revoke.status).toBe(200);
      expect(await revoke.json()).toMatchObject({ id: user.keyId, revoked: true });
      await expectInvalidKey(await gateway.request("/v1/models", { key: user.key }));
      await expectInvalidKey(
        await gateway.request("/v1/chat/completions", { key: user.key, json: CHAT }),
      );
    });

    it("through DELETE /v1/account/keys/{id}", async () => {
      const user = await createUser(gateway);
      const created = await gateway.request("/v1/account/keys", {
        key: user.key,
        json: { name: "second" },
      });
      expect(created.status).toBe(201);
      const second = (await created.json()) as { id: string; key: string };
      await expectAcceptedEverywhere(gateway, second.key);

      const deleted = await gateway.request(`/v1/account/keys/${second.id}`, {
        key: user.key,
        method: "DELETE",
      });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ id: second.id, revoked: true });
      await expectInvalidKey(
        await gateway.request("/v1/chat/completions", { key: second.key, json: CHAT }),
      );
      await expectInvalidKey(await gateway.request("/v1/account", { key: second.key }));
      // The key that revoked it still works.
      expect((await gateway.request("/v1/models", { key: user.key })).status).toBe(200);
    });

    it("a key can revoke itself and is then refused", async () => {
      const user = await createUser(gateway);
      const deleted = await gateway.request(`/v1/account/keys/${user.keyId}`, {
        key: user.key,
        method: "DELETE",
      });
      expect(deleted.status).toBe(200);
      await expectInvalidKey(await gateway.request("/v1/models", { key: user.key }));
    });

    it("another account's key cannot be revoked through the account API", async () => {
      const owner = await createUser(gateway);
      const other = await createUser(gateway);
      const attempt = await gateway.request(`/v1/account/keys/${owner.keyId}`, {
        key: other.key,
        method: "DELETE",
      });
      await expectGatewayError(attempt, {
        status: 404,
        type: "invalid_request_error",
        code: "key_not_found",
      });
      expect((await gateway.request("/v1/models", { key: owner.key })).status).toBe(200);
    });
  });

  describe("model permissions", () => {
    let limited: { key: string; keyId: string };

    beforeAll(async () => {
      limited = await createUser(gateway, { keyOptions: { models: ["gpt-4o-mini"] } });
    });

    it("refuses a model outside the key's allowlist with 403 model_not_allowed", async () => {
      const response = await gateway.request("/v1/chat/completions", {
        key: limited.key,
        json: { ...CHAT, model: "gpt-4o" },
      });
      await expectGatewayError(response, {
        status: 403,
        type: "permission_error",
        code: "model_not_allowed",
        param: "model",
      });
    });

    it("serves the allowed model", async () => {
      const response = await gateway.request("/v1/chat/completions", {
        key: limited.key,
        json: CHAT,
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { model: string }).model).toBe("gpt-4o-mini");
    });

    it("lists only the allowed models", async () => {
      const response = await gateway.request("/v1/models", { key: limited.key });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { object: string; data: { id: string }[] };
      expect(body.object).toBe("list");
      expect(body.data.map((model) => model.id)).toEqual(["gpt-4o-mini"]);
    });

    it("hides a model outside the allowlist from GET /v1/models/{id}", async () => {
      const hidden = await gateway.request("/v1/models/gpt-4o", { key: limited.key });
      await expectGatewayError(hidden, {
        status: 404,
        type: "invalid_request_error",
        code: "model_not_found",
      });
      const shown = await gateway.request("/v1/models/gpt-4o-mini", { key: limited.key });
      expect(shown.status).toBe(200);
    });

    it("refuses an allowlist naming a model the catalog does not have", async () => {
      const user = await createUser(gateway);
      const response = await gateway.request("/v1/account/keys", {
        key: user.key,
        json: { models: ["gpt-4o-mini", "gpt-4o-mni"] },
      });
      await expectGatewayError(response, {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "models[1]",
      });
    });

    it("a restricted key cannot mint a less restricted key", async () => {
      const wider = await gateway.request("/v1/account/keys", {
        key: limited.key,
        json: { models: ["gpt-4o"] },
      });
      await expectGatewayError(wider, {
        status: 403,
        type: "permission_error",
        code: "model_not_allowed",
      });
      const inherited = await gateway.request("/v1/account/keys", { key: limited.key, json: {} });
      expect(inherited.status).toBe(201);
      const child = (await inherited.json()) as { key: string; models: string[] };
      expect(child.models).toEqual(["gpt-4o-mini"]);
      const refused = await gateway.request("/v1/chat/completions", {
        key: child.key,
        json: { ...CHAT, model: "gpt-4o" },
      });
      expect(refused.status).toBe(403);
    });
  });

  it("a key with limits hands them down to the keys it creates", async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const parent = await createUser(gateway, { keyOptions: { rpm: 10, expires_at: expires } });
    const greedy = await gateway.request("/v1/account/keys", {
      key: parent.key,
      json: { rpm: 1000 },
    });
    await expectGatewayError(greedy, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "rpm",
    });
    const later = await gateway.request("/v1/account/keys", {
      key: parent.key,
      json: { expires_at: new Date(Date.now() + 7_200_000).toISOString() },
    });
    await expectGatewayError(later, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "expires_at",
    });
    const child = await gateway.request("/v1/account/keys", { key: parent.key, json: {} });
    expect(child.status).toBe(201);
    expect(await child.json()).toMatchObject({ rpm: 10, expires_at: expires, models: [] });
  });
});

describe("key storage", () => {
  it("stores SHA-256 hashes of keys and session tokens, never the secrets", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "switchyard-keys-")), "gateway.sqlite");
    const gateway = await startTestGateway({ config: { database_url: file } });
    const secrets: string[] = [gateway.adminKey];
    try {
      const user = await createUser(gateway);
      secrets.push(user.key);
      const extra = await gateway.request("/v1/account/keys", { key: user.key, json: {} });
      secrets.push(((await extra.json()) as { key: string }).key);
      const registered = await gateway.request("/v1/account/register", {
        json: { email: "stored@example.com", password: "correct horse battery" },
      });
      expect(registered.status).toBe(201);
      secrets.push(((await registered.json()) as { key: string }).key);
      const login = await gateway.request("/v1/account/login", {
        json: { email: "stored@example.com", password: "correct horse battery" },
      });
      const session = ((await login.json()) as { token: string }).token;
      expect(session).toMatch(/^sess_[0-9A-Za-z]{40}$/);

      for (const key of secrets) expect(key).toMatch(KEY_PATTERN);
      expect(new Set(secrets).size).toBe(secrets.length);

      await gateway.close();
      const db = new Database(file, { readonly: true });
      try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[];
        expect(tables.map((table) => table.name)).toEqual(
          expect.arrayContaining(["accounts", "api_keys", "sessions", "ledger_entries"]),
        );
        const forbidden = [...secrets, session, "correct horse battery"];
        let cells = 0;
        for (const { name } of tables) {
          const rows = db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
          for (const row of rows) {
            for (const value of Object.values(row)) {
              if (typeof value !== "string") continue;
              cells += 1;
              for (const secret of forbidden) expect(value).not.toContain(secret);
              expect(value).not.toMatch(/sk-[0-9A-Za-z]{40,}/);
            }
          }
        }
        expect(cells).toBeGreaterThan(20);

        const hashes = (
          db.prepare("SELECT key_hash FROM api_keys").all() as { key_hash: string }[]
        ).map((row) => row.key_hash);
        expect(hashes).toHaveLength(secrets.length);
        for (const key of secrets) expect(hashes).toContain(sha256(key));
        const sessionHashes = db.prepare("SELECT token_hash FROM sessions").all() as {
          token_hash: string;
        }[];
        expect(sessionHashes.map((row) => row.token_hash)).toEqual([sha256(session)]);
      } finally {
        db.close();
      }
    } finally {
      await gateway.close();
    }
  });
});
