import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { UsageRecord } from "./billing-types.ts";
import { openDatabase } from "./connect.ts";
import { sqlStore } from "./index.ts";
import { KeptBalances } from "./kept-balances.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { Store } from "./types.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A store on a fresh SQLite file, counting the transactions it runs. */
async function openCountingStore() {
  const file = join(mkdtempSync(join(tmpdir(), "kept-balances-")), "s.sqlite");
  const handle = await openDatabase(file);
  let transactionsRun = 0;
  const counting: TransactionRunner = {
    inProcess: handle.transactions.inProcess,
    run(body, hint) {
      transactionsRun += 1;
      return handle.transactions.run(body, hint);
    },
  };
  const store = sqlStore({ ...handle, transactions: counting });
  cleanups.push(() => store.close());
  const account = await store.createAccount({
    email: `kept-${Math.random()}@example.com`,
    passwordHash: null,
    role: "user",
  });
  const key = await store.createKey({
    accountId: account.id,
    name: "kept",
    keyHash: `hash-${Math.random()}`,
    prefix: "sk-kept",
    models: [],
  });
  keyOf.set(account.id, key.id);
  return { file, store, accountId: account.id, transactions: () => transactionsRun };
}

const keyOf = new Map<string, string>();
let sequence = 0;
function holdInput(accountId: string, amountMicros: number) {
  sequence += 1;
  return {
    requestId: `req_kept_${sequence}`,
    accountId,
    keyId: keyOf.get(accountId)!,
    model: "gpt-4o-mini",
    endpoint: "/v1/chat/completions",
    instanceId: "test",
    floorMicros: 0,
    amountMicros,
  };
}

function usage(requestId: string, accountId: string, costMicros: number): UsageRecord {
  return {
    requestId,
    accountId,
    keyId: keyOf.get(accountId)!,
    model: "gpt-4o-mini",
    endpoint: "/v1/chat/completions",
    status: "succeeded",
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: 0,
    characters: 0,
    costMicros,
    heldMicros: 0,
    usageSource: "upstream",
    upstreamRequestId: null,
    latencyMs: 1,
    ttfbMs: 1,
    breakdown: null,
    createdAt: Date.now(),
  };
}

/** The balance in the file, read by a connection of its own. */
function balanceInFile(file: string, accountId: string): number {
  const side = new SQLite(file);
  try {
    const row = side.prepare("select balance_micros from accounts where id = ?").get(accountId) as {
      balance_micros: number;
    };
    return row.balance_micros;
  } finally {
    side.close();
  }
}

/** A hold and its settlement, so the account's balance is kept. */
async function settleOne(store: Store, accountId: string, costMicros: number) {
  const input = holdInput(accountId, costMicros);
  expect(await store.placeHold(input)).toMatchObject({ placed: true });
  await store.settle(usage(input.requestId, accountId, costMicros));
}

describe("KeptBalances", () => {
  it("keeps what was staged only once its transaction commits", () => {
    const kept = new KeptBalances();
    kept.stage("acc_1", 100, 0);
    expect(kept.get("acc_1")).toBeUndefined();
    kept.committed();
    expect(kept.get("acc_1")).toEqual({ balanceMicros: 100, heldMicros: 0 });
    kept.stage("acc_1", 50, 0);
    kept.rolledBack();
    kept.committed();
    expect(kept.get("acc_1")).toEqual({ balanceMicros: 100, heldMicros: 0 });
  });

  it("forgets an account written after it was staged, and what was kept of it", () => {
    const kept = new KeptBalances();
    kept.stage("acc_1", 100, 0);
    kept.committed();
    kept.stage("acc_1", 90, 0);
    kept.drop("acc_1");
    kept.committed();
    expect(kept.get("acc_1")).toBeUndefined();
  });
});

describe("the transaction runner and the kept balances", () => {
  it("keeps a staged balance when its batch commits, never when it rolls back", async () => {
    const handle = await openDatabase(
      join(mkdtempSync(join(tmpdir(), "kept-runner-")), "s.sqlite"),
    );
    cleanups.push(() => handle.close());
    const balances = handle.balances!;
    const stageAndMaybeFail = function* (accountId: string, fail: boolean) {
      yield handle.db.selectFrom("accounts").select("id").compile();
      balances.stage(accountId, 123, 0);
      if (fail) throw new Error("refused");
    };
    await expect(
      handle.transactions.run(() => stageAndMaybeFail("acc_failed", true)),
    ).rejects.toThrow("refused");
    expect(balances.get("acc_failed")).toBeUndefined();
    await handle.transactions.run(() => stageAndMaybeFail("acc_ok", false));
    expect(balances.get("acc_ok")).toEqual({ balanceMicros: 123, heldMicros: 0 });
  });
});

describe("holds from the kept balance (SQLite)", () => {
  it("places a hold without a transaction once the balance is kept", async () => {
    const { store, accountId, transactions } = await openCountingStore();
    await store.adjustBalance({ accountId, amountMicros: 10_000, reason: "test" });
    await settleOne(store, accountId, 100);
    const before = transactions();
    expect(await store.placeHold(holdInput(accountId, 1_000))).toMatchObject({ placed: true });
    expect(transactions()).toBe(before);
  });

  it("refuses a hold after a debit that the kept balance did not see", async () => {
    const { file, store, accountId } = await openCountingStore();
    await store.adjustBalance({ accountId, amountMicros: 10_000, reason: "test" });
    await settleOne(store, accountId, 100);
    await store.adjustBalance({ accountId, amountMicros: -9_000, reason: "debit" });
    expect(balanceInFile(file, accountId)).toBe(900);
    expect(await store.placeHold(holdInput(accountId, 5_000))).toMatchObject({
      placed: false,
      availableMicros: 900,
    });
  });

  it("places a hold another process's credit made room for", async () => {
    const { file, store, accountId } = await openCountingStore();
    await store.adjustBalance({ accountId, amountMicros: 10_000, reason: "test" });
    await settleOne(store, accountId, 100);
    const side = new SQLite(file);
    side
      .prepare("update accounts set balance_micros = balance_micros + 50000 where id = ?")
      .run(accountId);
    side.close();
    expect(await store.placeHold(holdInput(accountId, 30_000))).toMatchObject({ placed: true });
  });

  it("counts the holds still open against the kept balance", async () => {
    const { store, accountId } = await openCountingStore();
    await store.adjustBalance({ accountId, amountMicros: 10_000, reason: "test" });
    await settleOne(store, accountId, 100);
    expect(await store.placeHold(holdInput(accountId, 6_000))).toMatchObject({ placed: true });
    expect(await store.placeHold(holdInput(accountId, 6_000))).toMatchObject({
      placed: false,
      availableMicros: 3_900,
    });
  });

  it("decides every hold as the file's balance and the open holds say (property)", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("hold" as const), amount: fc.integer({ min: 1, max: 4_000 }) }),
      fc.record({
        kind: fc.constant("settle" as const),
        pick: fc.nat(),
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant("adjust" as const),
        amount: fc.integer({ min: -3_000, max: 3_000 }).filter((n) => n !== 0),
      }),
      fc.record({
        kind: fc.constant("foreign_credit" as const),
        amount: fc.integer({ min: 1, max: 3_000 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const { file, store, accountId } = await openCountingStore();
        await store.adjustBalance({ accountId, amountMicros: 5_000, reason: "start" });
        const open = new Map<string, number>();
        for (const s of steps) {
          if (s.kind === "hold") {
            const input = holdInput(accountId, s.amount);
            const held = [...open.values()].reduce((sum, amount) => sum + amount, 0);
            const room = balanceInFile(file, accountId) - held;
            const result = await store.placeHold(input);
            expect(result.placed).toBe(room >= s.amount);
            if (result.placed) open.set(input.requestId, s.amount);
          } else if (s.kind === "settle" || s.kind === "release") {
            const ids = [...open.keys()];
            if (ids.length === 0) continue;
            const requestId = ids[s.pick % ids.length]!;
            const amount = open.get(requestId)!;
            open.delete(requestId);
            if (s.kind === "settle")
              await store.settle(usage(requestId, accountId, Math.floor(amount * s.share)));
            else await store.releaseHold(usage(requestId, accountId, 0), "test");
          } else if (s.kind === "adjust") {
            await store
              .adjustBalance({ accountId, amountMicros: s.amount, reason: "adjust" })
              .catch(() => undefined); // a debit the balance has no room for is refused
          } else {
            const side = new SQLite(file);
            side
              .prepare("update accounts set balance_micros = balance_micros + ? where id = ?")
              .run(s.amount, accountId);
            side.close();
          }
          expect(balanceInFile(file, accountId)).toBeGreaterThanOrEqual(0);
        }
        await store.close();
        cleanups.pop();
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});
