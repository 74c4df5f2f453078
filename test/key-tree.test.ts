/**
 * Keys minted by keys form a tree: a child dies with its parent (at once, cached or not), spends
 * its ancestors' rate and concurrency budgets, and a key sees and manages only its own subtree.
 * Numeric key options are range-checked, and listings survive any stored value.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const CHAT = { model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };

interface KeyBody {
  id: string;
  key: string;
  parent_key_id: string | null;
  revoked: boolean;
  expires_at: string | null;
}

describe("keys minted by keys", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  async function mint(parent: string, json: Record<string, unknown> = {}): Promise<KeyBody> {
    const response = await gateway.request("/v1/account/keys", { key: parent, json });
    expect(response.status, await response.clone().text()).toBe(201);
    return (await response.json()) as KeyBody;
  }

  const chat = (key: string, content = "hi") =>
    gateway.request("/v1/chat/completions", {
      key,
      json: { ...CHAT, messages: [{ role: "user", content }] },
    });

  async function listed(key: string): Promise<KeyBody[]> {
    const response = await gateway.request("/v1/account/keys", { key });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: KeyBody[] }).data;
  }

  describe("revocation cascades to every descendant at once", () => {
    for (const via of ["the account API", "the admin API"] as const) {
      it(`through ${via}`, async () => {
        const user = await createUser(gateway);
        const child = await mint(user.key);
        const grandchild = await mint(child.key);
        // All three are in use, so all three are in the key cache.
        for (const key of [user.key, child.key, grandchild.key])
          expect((await chat(key)).status).toBe(200);

        const revoked =
          via === "the account API"
            ? await gateway.request(`/v1/account/keys/${user.keyId}`, {
                key: user.key,
                method: "DELETE",
              })
            : await gateway.request(`/v1/admin/keys/${user.keyId}/revoke`, {
                key: gateway.adminKey,
                method: "POST",
              });
        expect(revoked.status).toBe(200);
        for (const key of [user.key, child.key, grandchild.key])
          await expectInvalidKey(await chat(key));

        const keys = await gateway.request(`/v1/admin/accounts/${user.accountId}/keys`, {
          key: gateway.adminKey,
        });
        const data = ((await keys.json()) as { data: KeyBody[] }).data;
        expect(data.map((key) => [key.id, key.parent_key_id, key.revoked])).toEqual([
          [user.keyId, null, true],
          [child.id, user.keyId, true],
          [grandchild.id, child.id, true],
        ]);
      });
    }

    it("revoking a middle key leaves its parent and siblings working", async () => {
      const user = await createUser(gateway);
      const left = await mint(user.key);
      const right = await mint(user.key);
      const below = await mint(left.key);
      const response = await gateway.request(`/v1/account/keys/${left.id}`, {
        key: user.key,
        method: "DELETE",
      });
      expect(response.status).toBe(200);
      await expectInvalidKey(await chat(left.key));
      await expectInvalidKey(await chat(below.key));
      expect((await chat(user.key)).status).toBe(200);
      expect((await chat(right.key)).status).toBe(200);
    });
  });

  it("children spend their ancestors' rate budget: an rpm 5 key admits 5 requests through its whole tree", async () => {
    const user = await createUser(gateway, { keyOptions: { rpm: 5 } });
    const children = [await mint(user.key), await mint(user.key), await mint(user.key)];
    const grandchild = await mint(children[0]!.key);
    const keys = [user.key, ...children.map((child) => child.key), grandchild.key];
    const statuses: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const key of keys) {
        const response = await chat(key);
        statuses.push(response.status);
        if (response.status === 429) {
          expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        }
        await response.arrayBuffer();
      }
    }
    expect(statuses).toHaveLength(25);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
  });

  it("a child's own tighter budget still applies, and counts against the parent", async () => {
    const user = await createUser(gateway, { keyOptions: { rpm: 4 } });
    const child = await mint(user.key, { rpm: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(child.key)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const parent = [];
    for (let i = 0; i < 3; i++) parent.push((await chat(user.key)).status);
    expect(parent).toEqual([200, 200, 429]);
  });

  it("children share their ancestors' concurrency slots", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 2 } });
    const child = await mint(user.key);
    const grandchild = await mint(child.key);
    const slow = "[[sandbox:delay=300]] slow";
    const responses = await Promise.all(
      [user.key, child.key, grandchild.key, child.key, grandchild.key, user.key].map((key) =>
        chat(key, slow),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(4);
    // The slots are given back: the tree works again.
    expect((await chat(grandchild.key)).status).toBe(200);
    expect((await chat(user.key)).status).toBe(200);
  });

  describe("a key sees and manages its own subtree only", () => {
    it("a model-restricted key cannot revoke, or see, its account's unrestricted key", async () => {
      const user = await createUser(gateway);
      const restricted = await gateway.request(`/v1/admin/accounts/${user.accountId}/keys`, {
        key: gateway.adminKey,
        json: { models: ["gpt-4o-mini"] },
      });
      const narrow = (await restricted.json()) as KeyBody;
      await expectGatewayError(
        await gateway.request(`/v1/account/keys/${user.keyId}`, {
          key: narrow.key,
          method: "DELETE",
        }),
        { status: 404, type: "invalid_request_error", code: "key_not_found" },
      );
      expect((await chat(user.key)).status).toBe(200);
      expect((await listed(narrow.key)).map((key) => key.id)).toEqual([narrow.id]);
      // The unrestricted key, too, sees only itself: the two are siblings.
      expect((await listed(user.key)).map((key) => key.id)).toEqual([user.keyId]);
    });

    it("a child cannot touch its parent or siblings; a parent manages its descendants", async () => {
      const user = await createUser(gateway);
      const child = await mint(user.key);
      const sibling = await mint(user.key);
      const grandchild = await mint(child.key);
      const tree = await listed(user.key);
      expect(tree.map((key) => key.id)).toEqual([user.keyId, child.id, sibling.id, grandchild.id]);
      expect((await listed(child.key)).map((key) => key.id)).toEqual([child.id, grandchild.id]);
      expect((await listed(grandchild.key)).map((key) => key.id)).toEqual([grandchild.id]);

      for (const target of [user.keyId, sibling.id]) {
        await expectGatewayError(
          await gateway.request(`/v1/account/keys/${target}`, {
            key: child.key,
            method: "DELETE",
          }),
          { status: 404, type: "invalid_request_error", code: "key_not_found" },
        );
      }
      expect((await chat(user.key)).status).toBe(200);
      expect((await chat(sibling.key)).status).toBe(200);

      const byGrandparent = await gateway.request(`/v1/account/keys/${grandchild.id}`, {
        key: user.key,
        method: "DELETE",
      });
      expect(byGrandparent.status).toBe(200);
      await expectInvalidKey(await chat(grandchild.key));
      expect((await chat(child.key)).status).toBe(200);
    });

    it("a session sees and manages every key of the account", async () => {
      const email = `tree-${Date.now()}@example.com`;
      const password = "a long enough password";
      const registered = await gateway.request("/v1/account/register", {
        json: { email, password },
      });
      const { key, api_key } = (await registered.json()) as { key: string; api_key: KeyBody };
      const child = await mint(key);
      const login = await gateway.request("/v1/account/login", { json: { email, password } });
      const { token } = (await login.json()) as { token: string };
      expect((await listed(token)).map((entry) => entry.id)).toEqual([api_key.id, child.id]);
      const revoked = await gateway.request(`/v1/account/keys/${api_key.id}`, {
        key: token,
        method: "DELETE",
      });
      expect(revoked.status).toBe(200);
      await expectInvalidKey(await chat(child.key));
    });
  });

  it("a key minted by an admin account's key is bounded like any other: no admin API, its own subtree only", async () => {
    const restricted = await mint(gateway.adminKey, { models: ["gpt-4o-mini"] });
    for (const path of ["/v1/admin/accounts", "/v1/admin/usage", "/v1/admin/audit", "/metrics"])
      await expectGatewayError(await gateway.request(path, { key: restricted.key }), {
        status: 403,
        type: "permission_error",
        code: "admin_required",
      });
    // It cannot mint an unrestricted key through the admin API either.
    const escalate = await gateway.request("/v1/admin/accounts", {
      key: restricted.key,
      json: { email: `escalate-${Date.now()}@example.com`, balance_micros: 1_000_000 },
    });
    expect(escalate.status).toBe(403);
    // On the account API it sees and manages its own subtree, not the admin's keys.
    const grandchild = await mint(restricted.key);
    expect((await listed(restricted.key)).map((entry) => entry.id)).toEqual([
      restricted.id,
      grandchild.id,
    ]);
    // The admin's own key keeps its powers.
    expect((await gateway.request("/v1/admin/accounts", { key: gateway.adminKey })).status).toBe(
      200,
    );
  });

  it("a minted key reads the webhook secret but cannot rotate it or change the budget", async () => {
    const user = await createUser(gateway);
    const child = await mint(user.key);
    const read = await gateway.request("/v1/account/webhook-secret", { key: child.key });
    expect(read.status).toBe(200);
    const { secret } = (await read.json()) as { secret: string };
    for (const [path, init] of [
      ["/v1/account/webhook-secret/rotate", { method: "POST" }],
      ["/v1/account/budget", { method: "PATCH", json: { monthly_budget_micros: 1_000_000 } }],
    ] as const) {
      const refused = await gateway.request(path, { key: child.key, ...init });
      const body = await expectGatewayError(refused, {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_request",
      });
      expect(body.message).toMatch(/A key minted by a key cannot/);
    }
    // Unchanged: the account's own key still signs with the same secret.
    const again = await gateway.request("/v1/account/webhook-secret", { key: user.key });
    expect(((await again.json()) as { secret: string }).secret).toBe(secret);
  });

  it("keys nest at most 10 deep", async () => {
    const user = await createUser(gateway);
    let parent = user.key;
    for (let depth = 2; depth <= 10; depth++) parent = (await mint(parent)).key;
    await expectGatewayError(await gateway.request("/v1/account/keys", { key: parent, json: {} }), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_request",
    });
    expect((await chat(parent)).status).toBe(200);
  });
});

describe("key options are range-checked", () => {
  let gateway: TestGateway;
  let file: string;

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), "switchyard-key-range-")), "gateway.sqlite");
    gateway = await startTestGateway({ config: { database_url: file } });
  });
  afterAll(() => gateway.close());

  it("refuses out-of-range numbers with 400 on the user and admin APIs, and listings keep working", async () => {
    const user = await createUser(gateway);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ expires_at: 1e20 }, "expires_at"],
      [{ expires_at: -1 }, "expires_at"],
      [{ expires_at: "+275760-09-13T00:00:00.000Z" }, "expires_at"],
      [{ expires_at: "10000-01-01T00:00:00Z" }, "expires_at"],
      [{ rpm: 1e12 }, "rpm"],
      [{ tpm: 2 ** 31 }, "tpm"],
      [{ concurrency: 1e9 }, "concurrency"],
      [{ rpm: 1.5 }, "rpm"],
    ];
    for (const [json, param] of cases) {
      for (const path of ["/v1/account/keys", `/v1/admin/accounts/${user.accountId}/keys`]) {
        const key = path.startsWith("/v1/admin") ? gateway.adminKey : user.key;
        await expectGatewayError(await gateway.request(path, { key, json }), {
          status: 400,
          type: "invalid_request_error",
          code: "invalid_parameter",
          param,
        });
      }
    }
    const latest = await gateway.request(`/v1/admin/accounts/${user.accountId}/keys`, {
      key: gateway.adminKey,
      json: { expires_at: 253_402_300_799 },
    });
    expect(latest.status).toBe(201);
    expect(((await latest.json()) as KeyBody).expires_at).toBe("9999-12-31T23:59:59.000Z");
    expect((await gateway.request("/v1/account/keys", { key: user.key })).status).toBe(200);
  });

  it("lists keys whatever their stored expiry, revocation or limits hold", async () => {
    const user = await createUser(gateway);
    const child = (await (
      await gateway.request("/v1/account/keys", { key: user.key, json: {} })
    ).json()) as KeyBody;
    // Values no API accepts, as an older version or a hand edit could have left them.
    const db = new Database(file);
    try {
      db.prepare("UPDATE api_keys SET expires_at = ?, rpm = ? WHERE id = ?").run(
        1e23,
        2 ** 40,
        user.keyId,
      );
      db.prepare("UPDATE api_keys SET revoked_at = ?, models = ? WHERE id = ?").run(
        -1e300,
        "not json",
        child.id,
      );
    } finally {
      db.close();
    }
    for (const [path, key] of [
      ["/v1/account/keys", user.key],
      [`/v1/admin/accounts/${user.accountId}/keys`, gateway.adminKey],
    ] as const) {
      const response = await gateway.request(path, { key });
      expect(response.status, path).toBe(200);
      const data = ((await response.json()) as { data: KeyBody[] }).data;
      expect(data.map((entry) => entry.id)).toEqual([user.keyId, child.id]);
      expect(data[0]!.expires_at).toBe("+275760-09-13T00:00:00.000Z");
      expect(data[1]!.revoked).toBe(true);
    }
  });
});
