/**
 * The video task store on SQLite (holds of other requests in memory) and PostgreSQL: a task's
 * hold is durable and counted against the balance, idempotency keys find the first task,
 * leases keep two pollers apart, a task is finished and charged exactly once however many
 * pollers see the result, stale-hold sweeps leave task holds alone, and the ledger verifies.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresReachable, throwawaySchema } from "../../test/support/postgres.ts";
import { newId, openStore, type Store, type UsageRecord } from "./index.ts";
import type { NewVideoTask } from "./task-types.ts";

const pgAvailable = await postgresReachable();

function task(accountId: string, overrides: Partial<NewVideoTask> = {}): NewVideoTask {
  return {
    id: newId("vtask"),
    accountId,
    keyId: null,
    model: "motion2.6-t2v",
    route: "dashscope:wan2.6-t2v",
    upstreamModel: "wan2.6-t2v",
    requestBody: { model: "motion2.6-t2v", input: { prompt: "x" } },
    idempotencyKey: null,
    requestHash: "h",
    durationSeconds: 5,
    resolution: "720p",
    aspectRatio: "16:9",
    holdMicros: 500_000,
    webhookUrl: null,
    nextPollAt: 0,
    ...overrides,
  };
}

function usage(accountId: string, id: string, costMicros: number): UsageRecord {
  return {
    requestId: id,
    accountId,
    keyId: null,
    model: "motion2.6-t2v",
    endpoint: "/v1/videos/generations",
    status: costMicros > 0 ? "succeeded" : "failed",
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: costMicros > 0 ? 5 : 0,
    characters: 0,
    costMicros,
    heldMicros: 0,
    usageSource: "upstream",
    upstreamRequestId: null,
    latencyMs: 1,
    ttfbMs: null,
    breakdown: null,
    createdAt: Date.now(),
  };
}

function taskSuite(name: string, open: () => Promise<{ store: Store; cleanup(): Promise<void> }>) {
  describe(`video tasks on ${name}`, () => {
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
      await store.adjustBalance({ accountId: created.id, amountMicros: balance, reason: "test" });
      return created.id;
    }

    it("holds the task's price durably and refuses what the balance cannot cover", async () => {
      const accountId = await account(1_200_000);
      const first = await store.createVideoTask(task(accountId));
      expect(first.kind).toBe("created");
      expect(await store.findAccountById(accountId)).toMatchObject({ heldMicros: 500_000 });
      expect((await store.createVideoTask(task(accountId))).kind).toBe("created");
      const third = await store.createVideoTask(task(accountId));
      expect(third).toEqual({ kind: "insufficient_balance", availableMicros: 200_000 });
      // An ordinary request's hold counts against the same balance.
      expect(
        await store.placeHold({
          requestId: newId("req"),
          accountId,
          keyId: "k",
          model: "m",
          endpoint: "/v1/chat/completions",
          instanceId: "test",
          amountMicros: 200_001,
          floorMicros: 0,
        }),
      ).toEqual({ placed: false, availableMicros: 200_000 });
      expect((await store.verify()).problems).toEqual([]);
    });

    it("returns the first task for a reused idempotency key, also when submissions race", async () => {
      const accountId = await account(10_000_000);
      const racing = await Promise.all(
        Array.from({ length: 5 }, () =>
          store.createVideoTask(task(accountId, { idempotencyKey: "same" })),
        ),
      );
      const created = racing.filter((result) => result.kind === "created");
      expect(created).toHaveLength(1);
      const ids = new Set(racing.map((result) => ("task" in result ? result.task.id : "")));
      expect(ids.size).toBe(1);
      expect(await store.findAccountById(accountId)).toMatchObject({ heldMicros: 500_000 });
      await store.releaseIdempotencyKey([...ids][0]!);
      expect((await store.createVideoTask(task(accountId, { idempotencyKey: "same" }))).kind).toBe(
        "created",
      );
    });

    it("leases due tasks to one poller at a time", async () => {
      const accountId = await account(1_000_000);
      const created = await store.createVideoTask(task(accountId));
      if (created.kind !== "created") throw new Error(created.kind);
      await store.markVideoTaskSubmitted(created.task.id, {
        providerTaskId: `p-${created.task.id}`,
        providerRecord: { output: { task_status: "PENDING" } },
        nextPollAt: 0,
      });
      const now = Date.now();
      const a = await store.claimDueVideoTasks(now, "a", 60_000, 1000);
      const b = await store.claimDueVideoTasks(now, "b", 60_000, 1000);
      expect(a.map((t) => t.id)).toContain(created.task.id);
      expect(b.map((t) => t.id)).not.toContain(created.task.id);
      // A lease that ran out is taken over.
      const later = await store.claimDueVideoTasks(now + 61_000, "b", 60_000, 1000);
      expect(later.map((t) => t.id)).toContain(created.task.id);
      expect((await store.findVideoTask(accountId, `p-${created.task.id}`))?.id).toBe(
        created.task.id,
      );
      expect(await store.findVideoTask("acct_other", created.task.id)).toBeUndefined();
    });

    it("finishes and charges a task exactly once, however many pollers see the result", async () => {
      const accountId = await account(1_000_000);
      const created = await store.createVideoTask(task(accountId));
      if (created.kind !== "created") throw new Error(created.kind);
      const id = created.task.id;
      const outcome = { status: "succeeded" as const, finishedAt: Date.now(), reportedSeconds: 5 };
      const wins = await Promise.all([1, 2, 3].map(() => store.finishVideoTask(id, outcome)));
      expect(wins.filter(Boolean)).toHaveLength(1);
      await Promise.all(
        [1, 2].map(() =>
          store.settleVideoTask(id, usage(accountId, id, 400_000), {
            billedSeconds: 5,
            reason: null,
          }),
        ),
      );
      expect(await store.findAccountById(accountId)).toMatchObject({
        balanceMicros: 600_000,
        heldMicros: 0,
      });
      const settled = await store.findVideoTaskById(id);
      expect(settled).toMatchObject({
        billingState: "settled",
        costMicros: 400_000,
        billedSeconds: 5,
      });
      expect((await store.listUsage({ accountId, limit: 10 })).map((row) => row.requestId)).toEqual(
        [id],
      );
      expect((await store.verify()).problems).toEqual([]);
    });

    it("never charges more than the hold, releases failed tasks, and sweeps leave task holds alone", async () => {
      const accountId = await account(2_000_000);
      const over = await store.createVideoTask(task(accountId));
      const failed = await store.createVideoTask(task(accountId));
      if (over.kind !== "created" || failed.kind !== "created") throw new Error("not created");
      expect(await store.releaseOpenHolds(Date.now() + 60_000, "stale")).toBe(0);
      expect(await store.findAccountById(accountId)).toMatchObject({ heldMicros: 1_000_000 });

      await store.finishVideoTask(over.task.id, { status: "succeeded", finishedAt: Date.now() });
      await store.settleVideoTask(over.task.id, usage(accountId, over.task.id, 9_000_000), {
        billedSeconds: 90,
        reason: "vendor reported 90 s",
      });
      await store.finishVideoTask(failed.task.id, {
        status: "failed",
        error: { code: "InternalError", message: "x" },
        finishedAt: Date.now(),
      });
      expect((await store.listFinalizingVideoTasks(10)).map((t) => t.id)).toEqual([failed.task.id]);
      await store.settleVideoTask(failed.task.id, usage(accountId, failed.task.id, 0), {
        billedSeconds: null,
        reason: "video task failed",
      });
      expect(await store.findAccountById(accountId)).toMatchObject({
        balanceMicros: 1_500_000,
        heldMicros: 0,
      });
      expect(await store.findVideoTaskById(failed.task.id)).toMatchObject({
        billingState: "released",
        costMicros: 0,
        error: { code: "InternalError", message: "x" },
      });
      expect(await store.listFinalizingVideoTasks(10)).toEqual([]);
      expect((await store.verify()).problems).toEqual([]);
    });

    it("pages the account's tasks newest first and keeps webhook attempts", async () => {
      const accountId = await account(10_000_000);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await store.createVideoTask(
          task(accountId, { webhookUrl: "http://127.0.0.1:9/hook" }),
        );
        if (created.kind === "created") ids.push(created.task.id);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      const first = await store.listVideoTasks(accountId, { limit: 2 });
      const second = await store.listVideoTasks(accountId, { limit: 2, after: first[1]!.id });
      const rest = await store.listVideoTasks(accountId, { limit: 10, after: second[1]!.id });
      expect([...first, ...second, ...rest].map((t) => t.id)).toEqual([...ids].reverse());

      const id = ids[0]!;
      await store.finishVideoTask(id, { status: "failed", finishedAt: Date.now() });
      await store.settleVideoTask(id, usage(accountId, id, 0), {
        billedSeconds: null,
        reason: null,
      });
      const due = await store.claimDueWebhooks(Date.now() + 1, "a", 60_000, 100);
      expect(due.map((t) => t.id)).toEqual([id]);
      await store.recordWebhookAttempt(
        id,
        "a",
        { at: 1, status: 500, durationMs: 3 },
        { state: "pending", nextAt: 10 },
      );
      await store.recordWebhookAttempt(
        id,
        "a",
        { at: 2, status: 200, durationMs: 4 },
        { state: "delivered", nextAt: null },
      );
      expect(await store.findVideoTaskById(id)).toMatchObject({
        webhookState: "delivered",
        webhookAttempts: [
          { at: 1, status: 500, durationMs: 3 },
          { at: 2, status: 200, durationMs: 4 },
        ],
      });
      const secret = await store.webhookSecret(accountId, () => "whsec_a");
      expect(await store.webhookSecret(accountId, () => "whsec_b")).toBe(secret);
      expect(await store.rotateWebhookSecret(accountId, "whsec_c")).toBe("whsec_c");
      expect(await store.webhookSecret(accountId, () => "whsec_d")).toBe("whsec_c");
    });
  });
}

taskSuite("SQLite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-tasks-"));
  return { store: await openStore(join(dir, "tasks.sqlite")), cleanup: async () => {} };
});

describe.skipIf(!pgAvailable)("PostgreSQL (skipped when no server answers)", () => {
  taskSuite("PostgreSQL", async () => {
    const schema = await throwawaySchema("switchyard_tasks");
    return { store: await openStore(schema.url), cleanup: schema.drop };
  });
});
