/**
 * Suspending an account (docs/accounts.md, "Suspending an account"): every key (a cached one, a
 * minted one), every session and a log-in are refused at once with `403 account_suspended`,
 * also on another instance of the same database (PostgreSQL and Redis); a stream under way
 * finishes and is billed; lifting the suspension restores everything; only another admin can
 * suspend, and each change is in the audit trail.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { freshDatabase } from "./support/cluster.ts";
import { accountWithPassword, PASSWORD } from "./support/console-accounts.ts";
import {
  createUser,
  requestsTo,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";
import { postgresReachable } from "./support/postgres.ts";
import { REDIS_URL, redisReachable, testPrefix } from "./support/redis.ts";

const scaleOut = (await postgresReachable()) && (await redisReachable());
const CHAT = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] };

async function errorCode(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

describe("suspending an account", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());
  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });
  const suspend = (id: string, reason = "unpaid invoice 12") =>
    admin(`/v1/admin/accounts/${id}/suspend`, { json: { reason } });
  const unsuspend = (id: string) => admin(`/v1/admin/accounts/${id}/unsuspend`, { method: "POST" });

  it("refuses the account's keys, minted keys, sessions and log-ins at once, until lifted", async () => {
    const { email, id } = await accountWithPassword(gateway, "user");
    const parent = await gateway.request(`/v1/admin/accounts/${id}/keys`, {
      key: gateway.adminKey,
      json: { name: "app" },
    });
    const key = ((await parent.json()) as { key: string }).key;
    const minted = await gateway.request("/v1/account/keys", { key, json: { name: "child" } });
    expect(minted.status).toBe(201);
    const child = ((await minted.json()) as { key: string }).key;
    const login = await gateway.request("/v1/account/login", {
      json: { email, password: PASSWORD },
    });
    const session = ((await login.json()) as { token: string }).token;
    // Both keys are in the key cache now.
    for (const each of [key, child])
      expect(
        (await gateway.request("/v1/chat/completions", { key: each, json: CHAT })).status,
      ).toBe(200);

    const suspended = await suspend(id);
    expect(suspended.status).toBe(200);
    expect(await suspended.json()).toMatchObject({
      id,
      suspended_reason: "unpaid invoice 12",
      suspended_at: expect.any(String),
    });

    for (const each of [key, child]) {
      const refused = await gateway.request("/v1/chat/completions", { key: each, json: CHAT });
      expect(refused.status).toBe(403);
      expect(await errorCode(refused)).toBe("account_suspended");
    }
    const sdk = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await expect(sdk.chat.completions.create(CHAT as never)).rejects.toBeInstanceOf(
      OpenAI.PermissionDeniedError,
    );
    const withSession = await gateway.request("/v1/account/balance", { key: session });
    expect(withSession.status).toBe(403);
    expect(await errorCode(withSession)).toBe("account_suspended");
    const again = await gateway.request("/v1/account/login", {
      json: { email, password: PASSWORD },
    });
    expect(again.status).toBe(403);
    expect(await errorCode(again)).toBe("account_suspended");
    // A wrong password tells nothing about the suspension.
    const guess = await gateway.request("/v1/account/login", {
      json: { email, password: "not the password at all" },
    });
    expect(guess.status).toBe(401);
    // Nor can a session or key of it mint a way around: a new key is refused too.
    expect((await gateway.request("/v1/account/keys", { key, json: {} })).status).toBe(403);
    const mcp = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    expect(mcp.status).toBe(403);

    const lifted = await unsuspend(id);
    expect(lifted.status).toBe(200);
    expect(await lifted.json()).toMatchObject({ suspended_at: null, suspended_reason: null });
    for (const each of [key, child, session])
      expect((await gateway.request("/v1/account/balance", { key: each })).status).toBe(200);
    const client = await connectMcp(gateway, key);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();

    const audit = (await (await admin(`/v1/admin/audit?target=${id}`)).json()) as {
      data: Array<{ action: string; reason: string | null }>;
    };
    expect(audit.data.map((event) => event.action).slice(0, 2)).toEqual([
      "account.unsuspend",
      "account.suspend",
    ]);
    expect(audit.data[1]?.reason).toBe("unpaid invoice 12");
  });

  it("lets a stream under way finish and bills it", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model: "gpt-4o-mini",
        stream: true,
        messages: [
          { role: "system", content: "[[sandbox:chunk-delay=50;words=12]]" },
          { role: "user", content: "hello" },
        ],
      },
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect((await suspend(user.accountId)).status).toBe(200);
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain("[DONE]");
    await expect
      .poll(async () =>
        (await gateway.services.store.listEntries(user.accountId, { limit: 10 })).some(
          (entry) => entry.kind === "charge" && entry.amountMicros < 0,
        ),
      )
      .toBe(true);
  });

  it("is an admin's act on another account, with a reason, on an account that exists", async () => {
    const other = await createUser(gateway);
    const self = await gateway.services.store.findKeyByHash(
      (await import("../src/auth/index.ts")).hashSecret(gateway.adminKey),
    );
    const own = await suspend(self?.accountId ?? "");
    expect(own.status).toBe(400);
    expect((await admin("/v1/account/balance")).status).toBe(200);
    const byUser = await gateway.request(`/v1/admin/accounts/${other.accountId}/suspend`, {
      key: other.key,
      json: { reason: "x" },
    });
    expect(byUser.status).toBe(403);
    expect(await errorCode(byUser)).toBe("admin_required");
    expect((await suspend("acct_nope")).status).toBe(404);
    expect((await unsuspend("acct_nope")).status).toBe(404);
    for (const body of [{}, { reason: "" }, { reason: "x".repeat(501) }, { reason: 5 }])
      expect(
        (await admin(`/v1/admin/accounts/${other.accountId}/suspend`, { json: body })).status,
      ).toBe(400);
    // Twice is once: the first time and reason stay, one audit event.
    expect((await suspend(other.accountId, "first")).status).toBe(200);
    const second = await suspend(other.accountId, "second");
    expect(((await second.json()) as { suspended_reason: string }).suspended_reason).toBe("first");
    const audit = (await (
      await admin(`/v1/admin/audit?target=${other.accountId}&action=account.suspend`)
    ).json()) as { data: unknown[] };
    expect(audit.data).toHaveLength(1);
    const listed = (await (await admin("/v1/admin/accounts?limit=500")).json()) as {
      data: Array<{ id: string; suspended_reason: string | null }>;
    };
    expect(listed.data.find((account) => account.id === other.accountId)?.suspended_reason).toBe(
      "first",
    );
  });
});

describe.skipIf(!scaleOut)("suspending an account on one instance of several", () => {
  const instances: RunningGateway[] = [];
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
    const prefix = testPrefix();
    for (let index = 0; index < 2; index++)
      instances.push(
        await startGateway({
          env: {},
          print: () => {},
          config: loadConfig({
            env: {},
            cwd: mkdtempSync(join(tmpdir(), "switchyard-test-")),
            overrides: {
              database_url: db.url,
              redis: { url: REDIS_URL, key_prefix: prefix },
              log_level: "silent",
              server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
            },
          }),
        }),
      );
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await db?.drop();
  });

  it("is refused by the other instance within a second, though it had the key cached", async () => {
    const [first, second] = instances as [RunningGateway, RunningGateway];
    const adminKey = first.bootstrapKey ?? "";
    const onFirst = requestsTo(first.url);
    const onSecond = requestsTo(second.url);
    const account = await onFirst("/v1/admin/accounts", {
      key: adminKey,
      json: { email: `s-${Date.now()}@example.com`, balance_micros: 1_000_000 },
    });
    const { id } = (await account.json()) as { id: string };
    const created = await onFirst(`/v1/admin/accounts/${id}/keys`, { key: adminKey, json: {} });
    const key = ((await created.json()) as { key: string }).key;
    expect((await onSecond("/v1/account/balance", { key })).status).toBe(200);
    expect(
      (await onFirst(`/v1/admin/accounts/${id}/suspend`, { key: adminKey, json: { reason: "r" } }))
        .status,
    ).toBe(200);
    await expect
      .poll(async () => (await onSecond("/v1/account/balance", { key })).status, {
        timeout: 1_500,
        interval: 50,
      })
      .toBe(403);
  });
});
