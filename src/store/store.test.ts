/**
 * One conformance suite for the store, run against SQLite and PostgreSQL (when reachable at
 * 127.0.0.1:5432, database `test`, in a throw-away schema), so the SQL stays dialect-neutral.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresReachable, throwawaySchema } from "../../test/support/postgres.ts";
import { openStore, type Store, type UsageRecord } from "./index.ts";

const HOLD_DEFAULTS = { endpoint: "/v1/chat/completions", instanceId: "test", floorMicros: 0 };

const pgAvailable = await postgresReachable();

function record(accountId: string, requestId: string, costMicros: number): UsageRecord {
  return {
    requestId,
    accountId,
    keyId: null,
    model: "gpt-4o-mini",
    endpoint: "/v1/chat/completions",
    status: "succeeded",
    inputTokens: 10,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 20,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: 0,
    characters: 0,
    costMicros,
    heldMicros: 0,
    usageSource: "upstream",
    upstreamRequestId: null,
    latencyMs: 5,
    ttfbMs: 2,
    breakdown: { input: 1, output: costMicros - 1 },
    createdAt: Date.UTC(2026, 10, 22, 12),
  };
}

function storeSuite(
  name: string,
  open: () => Promise<{ store: Store; cleanup(): Promise<void> }>,
  holds: "memory" | "table" = "table",
) {
  describe(`store on ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await open());
    });
    afterAll(async () => {
      await store.close();
      await cleanup();
    });

    async function account(balance: number) {
      const created = await store.createAccount({
        email: `${Math.random()}@example.com`,
        passwordHash: null,
        role: "user",
      });
      if (balance)
        await store.adjustBalance({ accountId: created.id, amountMicros: balance, reason: "test" });
      return created.id;
    }

    it("creates accounts and keys, finds keys by hash and revokes them", async () => {
      const accountId = await account(0);
      const key = await store.createKey({
        accountId,
        name: "k",
        keyHash: "h1",
        prefix: "sk-abcd…",
        models: ["gpt-4o"],
      });
      expect(await store.findKeyByHash("h1")).toMatchObject({
        id: key.id,
        models: ["gpt-4o"],
        revokedAt: null,
      });
      const revoked = await store.revokeKey(key.id, 1234);
      expect(revoked?.revokedAt).toBe(1234);
      expect(await store.listKeys(accountId)).toHaveLength(1);
    });

    it("never places holds beyond the available balance, even concurrently", async () => {
      const accountId = await account(1_000);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.placeHold({
            requestId: `${accountId}-c${i}`,
            accountId,
            keyId: "k",
            model: "m",
            ...HOLD_DEFAULTS,
            amountMicros: 100,
          }),
        ),
      );
      expect(results.filter((result) => result.placed)).toHaveLength(10);
      expect(results.find((result) => !result.placed)).toEqual({
        placed: false,
        availableMicros: 0,
      });
      expect((await store.findAccountById(accountId))?.heldMicros).toBe(1_000);
    });

    it("settles once per request, releases the hold, and keeps the ledger equal to the balance", async () => {
      const accountId = await account(10_000);
      await store.placeHold({
        requestId: `${accountId}-r1`,
        accountId,
        keyId: "k",
        model: "m",
        ...HOLD_DEFAULTS,
        amountMicros: 5_000,
      });
      const first = record(accountId, `${accountId}-r1`, 1_234);
      expect(await store.settle(first)).toEqual({ alreadySettled: false, ownClosing: true });
      // The same settlement again (its first reply lost) knows the closing for its own; another
      // closing of the request does not.
      expect(await store.settle(first)).toEqual({ alreadySettled: true, ownClosing: true });
      expect(await store.settle(record(accountId, `${accountId}-r1`, 1_234))).toEqual({
        alreadySettled: true,
        ownClosing: false,
      });
      await store.releaseHold(record(accountId, `${accountId}-r1`, 0), "late release");
      const after = await store.findAccountById(accountId);
      expect(after).toMatchObject({ balanceMicros: 10_000 - 1_234, heldMicros: 0 });
      expect((await store.findUsage(`${accountId}-r1`))?.costMicros).toBe(1_234);
      expect((await store.verify()).problems).toEqual([]);
    });

    it("releases a failed request's hold once and records it at zero cost", async () => {
      const accountId = await account(1_000);
      await store.placeHold({
        requestId: `${accountId}-f`,
        accountId,
        keyId: "k",
        model: "m",
        ...HOLD_DEFAULTS,
        amountMicros: 700,
      });
      await store.releaseHold(
        { ...record(accountId, `${accountId}-f`, 0), status: "failed" },
        "upstream failed",
      );
      await store.releaseHold(
        { ...record(accountId, `${accountId}-f`, 0), status: "failed" },
        "upstream failed",
      );
      expect(await store.findAccountById(accountId)).toMatchObject({
        balanceMicros: 1_000,
        heldMicros: 0,
      });
      expect(await store.findUsage(`${accountId}-f`)).toMatchObject({
        status: "failed",
        costMicros: 0,
        heldMicros: 700,
      });
    });

    it("closes a request once when charges and releases of it race", async () => {
      const accountId = await account(10_000);
      const requests = Array.from({ length: 6 }, (_, i) => `${accountId}-race${i}`);
      for (const requestId of requests)
        await store.placeHold({
          requestId,
          accountId,
          keyId: "k",
          model: "m",
          ...HOLD_DEFAULTS,
          amountMicros: 1_000,
        });
      const charges = await Promise.all(
        requests.flatMap((requestId) => [
          store.releaseHold({ ...record(accountId, requestId, 0), status: "failed" }, "race"),
          store.settle(record(accountId, requestId, 400)),
          store.settle(record(accountId, requestId, 400)),
        ]),
      );
      const charged = charges.filter((outcome) => outcome?.alreadySettled === false).length;
      expect(charged).toBeLessThanOrEqual(requests.length);
      expect(await store.findAccountById(accountId)).toMatchObject({
        balanceMicros: 10_000 - 400 * charged,
        heldMicros: 0,
      });
      for (const requestId of requests)
        expect((await store.findUsage(requestId))?.heldMicros).toBe(1_000);
      expect((await store.verify()).problems).toEqual([]);
    });

    it.skipIf(holds === "memory")(
      "never releases a hold with an in-flight row by age; the dead-request settlement closes it",
      async () => {
        const accountId = await account(1_000);
        const instanceId = `crashed-${accountId}`;
        await store.placeHold({
          requestId: `${accountId}-open`,
          accountId,
          keyId: "k",
          model: "m",
          ...HOLD_DEFAULTS,
          instanceId,
          amountMicros: 300,
        });
        await store.placeHold({
          requestId: `${accountId}-done`,
          accountId,
          keyId: "k",
          model: "m",
          ...HOLD_DEFAULTS,
          instanceId,
          amountMicros: 300,
        });
        await store.settle(record(accountId, `${accountId}-done`, 100));
        // However old, a request with an in-flight row may still be under way (a long stream).
        expect(await store.releaseOpenHolds(Date.now() + 1, "stale")).toBe(0);
        expect(await store.findAccountById(accountId)).toMatchObject({
          balanceMicros: 900,
          heldMicros: 300,
        });
        // Its instance is gone: it never delivered, so it is charged nothing and released.
        expect(await store.settleDeadRequests({ instanceId })).toBe(1);
        expect(await store.findAccountById(accountId)).toMatchObject({
          balanceMicros: 900,
          heldMicros: 0,
        });
        expect(await store.releaseOpenHolds(Date.now() + 1, "stale")).toBe(0);
        expect((await store.verify()).problems).toEqual([]);
      },
    );

    it("settles a dead instance's requests at their checkpoint or input (nothing before delivery), never above the hold", async () => {
      const accountId = await account(100_000);
      const place = (requestId: string, instanceId: string, floorMicros: number) =>
        store.placeHold({
          requestId,
          accountId,
          keyId: "k",
          model: "m",
          endpoint: "/v1/chat/completions",
          instanceId,
          amountMicros: 10_000,
          floorMicros,
        });
      const dead = `dead-${accountId}`;
      const alive = `alive-${accountId}`;
      // The dead instance never beats again (it has no fresh heartbeat); the live one does.
      await store.heartbeat(alive, Date.now());
      await place(`${accountId}-d1`, dead, 300);
      await place(`${accountId}-d2`, dead, 300);
      await place(`${accountId}-d3`, dead, 300);
      await place(`${accountId}-a1`, alive, 300);
      // d3 never starts delivering: a crash charges it nothing.
      for (const id of ["d1", "d2", "a1"]) await store.recordInflight(`${accountId}-${id}`, 300);
      const counts = {
        inputTokens: 1,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 2,
        reasoningTokens: 0,
        images: 0,
        videoSeconds: 0,
        characters: 0,
        breakdown: { output: 4_000 },
      };
      await store.checkpoint({ requestId: `${accountId}-d1`, costMicros: 4_000, record: counts });
      // A checkpoint above the hold is stored at the hold.
      await store.checkpoint({ requestId: `${accountId}-a1`, costMicros: 99_999, record: counts });

      // Only the dead instance's requests.
      expect(
        await store.settleDeadRequests({ heartbeatOlderThanMs: 60_000 }),
      ).toBeGreaterThanOrEqual(2);
      expect((await store.findUsage(`${accountId}-d1`))?.costMicros).toBe(4_000);
      expect((await store.findUsage(`${accountId}-d1`))?.status).toBe("interrupted");
      expect((await store.findUsage(`${accountId}-d2`))?.costMicros).toBe(300);
      // Holds kept in memory (SQLite) end with the process: no row, nothing to settle.
      if (holds === "table")
        expect(await store.findUsage(`${accountId}-d3`)).toMatchObject({
          status: "failed",
          costMicros: 0,
        });
      else await store.releaseHold(record(accountId, `${accountId}-d3`, 0), "test");
      expect(await store.findUsage(`${accountId}-a1`)).toBeUndefined();
      // Settling again changes nothing.
      await store.settleDeadRequests({ instanceId: dead });
      // The live instance's request, once its instance is named (a restart with a stable id).
      expect(await store.settleDeadRequests({ instanceId: alive })).toBe(1);
      expect((await store.findUsage(`${accountId}-a1`))?.costMicros).toBe(10_000);
      const after = await store.findAccountById(accountId);
      expect(after?.balanceMicros).toBe(100_000 - 4_000 - 300 - 10_000);
      expect(after?.heldMicros).toBe(0);
      expect((await store.verify()).problems).toEqual([]);
    });

    it("groups usage by day and model", async () => {
      const accountId = await account(10_000);
      for (const id of ["g1", "g2"]) {
        await store.placeHold({
          requestId: `${accountId}-${id}`,
          accountId,
          keyId: "k",
          model: "m",
          ...HOLD_DEFAULTS,
          amountMicros: 100,
        });
        await store.settle(record(accountId, `${accountId}-${id}`, 50));
      }
      const byDay = await store.groupUsage({ accountId, limit: 100 }, "day");
      expect(byDay).toEqual([
        {
          group: "2026-11-22",
          requests: 2,
          inputTokens: 20,
          outputTokens: 40,
          images: 0,
          videoSeconds: 0,
          characters: 0,
          costMicros: 100,
        },
      ]);
      const byModel = await store.groupUsage({ accountId, limit: 100 }, "model");
      expect(byModel.map((group) => group.group)).toEqual(["gpt-4o-mini"]);
      expect(await store.listUsage({ accountId, limit: 1, model: "gpt-4o-mini" })).toHaveLength(1);
    });

    it("keeps responses per account: read, and delete, only by their owner", async () => {
      const owner = await account(0);
      const other = await account(0);
      const id = `resp_${Math.random().toString(36).slice(2)}`;
      const response = { id, object: "response", output: [{ id: "msg_1", type: "message" }] };
      const inputItems = [{ id: "msg_0", type: "message", role: "user", content: "Hi" }];
      await store.saveResponse({
        id,
        accountId: owner,
        model: "gpt-4o-mini",
        response,
        inputItems,
        createdAt: 1_700_000_000_000,
      });
      expect(await store.findResponse(owner, id)).toEqual({
        id,
        accountId: owner,
        model: "gpt-4o-mini",
        response,
        inputItems,
        createdAt: 1_700_000_000_000,
      });
      expect(await store.findResponse(other, id)).toBeUndefined();
      expect(await store.deleteResponse(other, id)).toBe(false);
      expect(await store.deleteResponse(owner, id)).toBe(true);
      expect(await store.findResponse(owner, id)).toBeUndefined();
      expect(await store.deleteResponse(owner, id)).toBe(false);
    });
  });
}

storeSuite(
  "SQLite (holds in memory, the default)",
  async () => ({ store: await openStore(":memory:"), cleanup: async () => {} }),
  "memory",
);
storeSuite("SQLite (holds in the table)", async () => ({
  store: await openStore(":memory:", { holds: "table" }),
  cleanup: async () => {},
}));

describe("holds kept in memory (SQLite)", () => {
  it("writes nothing for a hold, so a crash leaves no hold behind", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "switchyard-holds-")), "holds.sqlite");
    const first = await openStore(file);
    const account = await first.createAccount({
      email: "h@example.com",
      passwordHash: "x",
      role: "user",
    });
    await first.adjustBalance({ accountId: account.id, amountMicros: 1_000, reason: "test" });
    expect(
      await first.placeHold({
        requestId: "r-open",
        accountId: account.id,
        keyId: "k",
        model: "m",
        ...HOLD_DEFAULTS,
        amountMicros: 600,
      }),
    ).toEqual({ placed: true });
    expect(await first.findAccountById(account.id)).toMatchObject({ heldMicros: 600 });
    expect(
      await first.placeHold({
        requestId: "r-two",
        accountId: account.id,
        keyId: "k",
        model: "m",
        ...HOLD_DEFAULTS,
        amountMicros: 600,
      }),
    ).toEqual({ placed: false, availableMicros: 400 });
    expect(await first.listEntries(account.id, { limit: 10 })).toHaveLength(1);
    // The process "crashes": the database is reopened without settling.
    await first.close();
    const second = await openStore(file);
    expect(await second.findAccountById(account.id)).toMatchObject({
      balanceMicros: 1_000,
      heldMicros: 0,
    });
    expect(await second.releaseOpenHolds(Date.now() + 1, "stale")).toBe(0);
    expect((await second.verify()).problems).toEqual([]);
    await second.close();
  });

  it("frees the hold when it is settled, and records it on the usage record", async () => {
    const store = await openStore(":memory:");
    const account = await store.createAccount({
      email: "s@example.com",
      passwordHash: "x",
      role: "user",
    });
    await store.adjustBalance({ accountId: account.id, amountMicros: 1_000, reason: "test" });
    await store.placeHold({
      requestId: "r1",
      accountId: account.id,
      keyId: "k",
      model: "m",
      ...HOLD_DEFAULTS,
      amountMicros: 900,
    });
    await store.settle(record(account.id, "r1", 250));
    expect(await store.findAccountById(account.id)).toMatchObject({
      balanceMicros: 750,
      heldMicros: 0,
    });
    expect(await store.findUsage("r1")).toMatchObject({ costMicros: 250, heldMicros: 900 });
    expect(
      await store.placeHold({
        requestId: "r2",
        accountId: account.id,
        keyId: "k",
        model: "m",
        ...HOLD_DEFAULTS,
        amountMicros: 750,
      }),
    ).toEqual({ placed: true });
    await store.releaseHold(
      { ...record(account.id, "r2", 0), status: "failed" },
      "upstream failed",
    );
    expect(await store.findAccountById(account.id)).toMatchObject({
      balanceMicros: 750,
      heldMicros: 0,
    });
    expect((await store.verify()).problems).toEqual([]);
    await store.close();
  });
});

describe.skipIf(!pgAvailable)(
  "PostgreSQL (skipped when no server answers at 127.0.0.1:5432)",
  () => {
    storeSuite("PostgreSQL", async () => {
      const schema = await throwawaySchema("switchyard_test");
      return { store: await openStore(schema.url), cleanup: schema.drop };
    });
  },
);
