/**
 * Webhook deliveries shared by several instances on one PostgreSQL database (video task and
 * budget alert webhooks). An instance leases a due delivery, makes an attempt and records it;
 * a lease that runs out mid-attempt (a receiver slow up to the timeout, then a slow store, a
 * GC or VM pause, clocks a few seconds apart) lets another instance take the delivery over.
 * What the instance that outlived its lease records must not undo what the other recorded,
 * two attempts recorded at once must both be kept, and a delivery another instance delivered
 * while this one was claiming it must not be sent again. Each test failed before its fix.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId, openStore, type Store } from "../src/store/index.ts";
import { createBudgetAlerts } from "../src/tasks/budget-alerts.ts";
import { startVideoEngine, type WebhookDispatcher } from "../src/tasks/video-engine.ts";
import { postgresReachable, throwawaySchema } from "./support/postgres.ts";
import { chatUsageRecord } from "./support/usage-record.ts";

const pgAvailable = await postgresReachable();
const LEASE_MS = 15_000;
const quiet = { info() {}, warn() {} };

/** An account with `balanceMicros` to spend. */
async function newAccount(store: Store, balanceMicros = 1_000_000): Promise<string> {
  const account = await store.createAccount({
    email: `${Math.random()}@example.com`,
    passwordHash: null,
    role: "user",
  });
  await store.adjustBalance({ accountId: account.id, amountMicros: balanceMicros, reason: "t" });
  return account.id;
}

/** A queued video task of `accountId` holding `holdMicros`, with a webhook URL (or none). */
async function newVideoTask(
  store: Store,
  accountId: string,
  { holdMicros = 500_000, webhookUrl = "https://receiver.example.com/hook" as string | null } = {},
): Promise<string> {
  const created = await store.createVideoTask({
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
    holdMicros,
    webhookUrl,
    nextPollAt: 0,
  });
  if (created.kind !== "created") throw new Error(created.kind);
  return created.task.id;
}

/** A task submitted, failed and settled (charged `costMicros`): its webhook, if any, is due. */
async function endedVideoTask(
  store: Store,
  accountId: string,
  costMicros = 0,
  webhookUrl: string | null = "https://receiver.example.com/hook",
): Promise<string> {
  const id = await newVideoTask(store, accountId, { webhookUrl });
  await store.markVideoTaskSubmitted(id, {
    providerTaskId: `p-${id}`,
    providerRecord: {},
    nextPollAt: 0,
  });
  await store.finishVideoTask(id, {
    status: "failed",
    error: { code: "X", message: "x" },
    finishedAt: Date.now(),
  });
  const record = chatUsageRecord({
    requestId: id,
    accountId,
    keyId: null,
    costMicros,
    createdAt: Date.now(),
  });
  await store.settleVideoTask(id, record, { billedSeconds: 0, reason: "failed" });
  expect((await store.findVideoTaskById(id))?.webhookState).toBe(webhookUrl ? "pending" : "none");
  return id;
}

/** A dispatcher whose every answer is decided by `answer` (counting what was sent). */
function dispatcher(answer: () => Promise<{ ok: boolean; status?: number; error?: string }>) {
  const sent: string[] = [];
  const webhooks: WebhookDispatcher = {
    async deliver(event) {
      sent.push(event.eventId);
      return { ...(await answer()), durationMs: 1 };
    },
    retryDelayMs: () => 10_000,
    givesUp: () => false,
    newSecret: () => "whsec_test",
  };
  return { webhooks, sent };
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function until(check: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The "instances" below are engines sharing one store: each group of tests has a throwaway
// schema of its own (what one group leaves due must not be claimed in the next).
let store: Store;
let url: string;
function freshSchemaFor(name: string): void {
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const schema = await throwawaySchema(name);
    store = await openStore(schema.url);
    url = schema.url;
    drop = schema.drop;
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });
}

describe.skipIf(!pgAvailable)("webhook leases on a shared PostgreSQL", () => {
  freshSchemaFor("wh_lease");
  async function pendingWebhookTask(
    accountId?: string,
    costMicros = 0,
    webhookUrl: string | null = "https://receiver.example.com/hook",
  ): Promise<string> {
    if (accountId) await store.adjustBalance({ accountId, amountMicros: 1_000_000, reason: "t" });
    return endedVideoTask(store, accountId ?? (await newAccount(store)), costMicros, webhookUrl);
  }

  // Instance A takes the delivery and stalls past its lease (slow receiver up to the
  // timeout, then a slow store write / a GC pause / a suspended VM / a clock a few seconds
  // behind B's). B takes the delivery over and the receiver answers B with 204: delivered.
  // A's attempt then ends (failed): recorded without asking whether A still held the lease,
  // it wrote `pending` over B's `delivered`, and the receiver, which had acknowledged the
  // event, was sent it again.
  it("a stale lease holder's failed attempt does not undo a delivery another instance made", async () => {
    const id = await pendingWebhookTask();
    let now = Date.now() + 1_000;
    const clock = () => now;
    const aStarted = deferred();
    const aGate = deferred<{ ok: boolean; error: string }>();
    const a = dispatcher(async () => {
      aStarted.resolve();
      return aGate.promise;
    });
    const b = dispatcher(async () => ({ ok: true, status: 204 }));
    const options = {
      tickMs: 1e9,
      pollMinIntervalMs: 1000,
      pollMaxIntervalMs: 1000,
      maxAgeMs: 1e9,
      submitGraceMs: 1000,
      leaseMs: LEASE_MS,
      webhookLeaseMs: LEASE_MS,
      vendorPollsPerSecond: () => 1,
      batchSize: 10,
      singleProcess: false,
    };
    const common = {
      store,
      models: { get: () => undefined },
      videoModel: () => undefined,
      logger: quiet,
      clock,
      options,
    };
    const engineA = startVideoEngine({ ...common, webhooks: a.webhooks, instanceId: "inst-a" });
    await aStarted.promise;
    // A's lease runs out while its attempt is still under way.
    now += LEASE_MS + 1;
    const engineB = startVideoEngine({ ...common, webhooks: b.webhooks, instanceId: "inst-b" });
    await until(async () => (await store.findVideoTaskById(id))?.webhookState === "delivered");
    expect(b.sent).toEqual([id]);
    // A's attempt ends now: it timed out.
    aGate.resolve({ ok: false, error: "timed out after 10000 ms" });
    await until(async () => (await store.findVideoTaskById(id))!.webhookAttempts.length >= 2);
    const after = await store.findVideoTaskById(id);
    // Later ticks of B (the receiver already answered 204).
    now += 60_000;
    await engineB.runOnce();
    now += 60_000;
    await engineB.runOnce();
    await engineA.stop();
    await engineB.stop();
    // One attempt each (A's timed out, B's was answered 204), and nothing after B's success.
    expect({ sends: b.sent.length + a.sent.length, state: after?.webhookState }).toEqual({
      sends: 2,
      state: "delivered",
    });
  });

  // The same on the budget alert deliveries, whose attempt was recorded whatever the row's
  // lease or state had become.
  it("a stale budget webhook attempt does not undo a delivery another instance made", async () => {
    const account = await store.createAccount({
      email: `${Math.random()}@example.com`,
      passwordHash: null,
      role: "user",
    });
    await store.setAccountBudget(account.id, {
      monthlyBudgetMicros: 500_000,
      webhookUrl: "https://receiver.example.com/budget",
    });
    // Spend: a video task charged 400_000 of its 500_000 hold.
    await pendingWebhookTask(account.id, 400_000, null);
    let now = Date.now();
    const clock = () => now;
    const aStarted = deferred();
    const aGate = deferred<{ ok: boolean; error: string }>();
    const a = dispatcher(async () => {
      aStarted.resolve();
      return aGate.promise;
    });
    const b = dispatcher(async () => ({ ok: true, status: 204 }));
    const logger = { warn() {}, info() {}, error() {}, debug() {} } as never;
    const common = { store, logger, clock, thresholds: () => [0.5], sweepMs: 0, leaseMs: LEASE_MS };
    const alertsA = createBudgetAlerts({ ...common, webhooks: a.webhooks });
    const alertsB = createBudgetAlerts({ ...common, webhooks: b.webhooks });
    const spent = await store.accountSpend(account.id, Date.UTC(2000, 0, 1, 0, 0, 0, 1));
    if (spent < 250_000) {
      alertsA.stop();
      alertsB.stop();
      throw new Error(`could not make spend (spent ${spent})`);
    }
    await alertsA.check(account.id);
    await aStarted.promise;
    now += LEASE_MS + 1;
    await alertsB.sweep();
    expect(b.sent).toHaveLength(1);
    aGate.resolve({ ok: false, error: "timed out after 10000 ms" });
    await alertsA.idle();
    now += 60_000;
    await alertsB.sweep();
    now += 60_000;
    await alertsB.sweep();
    alertsA.stop();
    alertsB.stop();
    expect(a.sent.length + b.sent.length).toBe(2);
  });
});

describe.skipIf(!pgAvailable)("webhook attempt records on a shared PostgreSQL", () => {
  freshSchemaFor("wh_attempts");
  // Two instances end an attempt of the same delivery at the same moment (the second took it
  // over when the first's lease ran out). recordWebhookAttempt reads webhook_attempts, appends
  // in JS and writes the whole list back, in a READ COMMITTED transaction with no row lock:
  // the second writer overwrites the first's list, and an attempt the receiver saw is missing
  // from the task record ("Every attempt is recorded on the task record", docs/videos.md).
  it("two attempts recorded at once are both kept", async () => {
    const accountId = await newAccount(store, 100_000_000);
    let lost = 0;
    for (let round = 0; round < 20; round++) {
      const id = await newVideoTask(store, accountId, { holdMicros: 1000 });
      const at = Date.now();
      await Promise.all([
        store.recordWebhookAttempt(
          id,
          "inst-a",
          { at, status: 504, error: "receiver answered HTTP 504", durationMs: 5 },
          { state: "pending", nextAt: at + 10_000 },
        ),
        store.recordWebhookAttempt(
          id,
          "inst-b",
          { at: at + 1, status: 204, durationMs: 5 },
          { state: "delivered", nextAt: null },
        ),
      ]);
      const task = await store.findVideoTaskById(id);
      if (task!.webhookAttempts.length !== 2) lost++;
    }
    expect(lost).toBe(0);
  });
});

describe.skipIf(!pgAvailable)("claiming video webhooks on a shared PostgreSQL", () => {
  freshSchemaFor("wh_claim");
  // The claim's update asked only whether the lease had run out, not whether the delivery was
  // still pending: another instance that delivered between this one's select and its update
  // (ending its lease) left a row the update still matched.
  it("does not send again an event another instance delivered while this one was claiming", async () => {
    const id = await endedVideoTask(store, await newAccount(store));

    // Instance B, which had claimed the delivery, is recording its successful attempt: the
    // same writes recordWebhookAttempt makes, in a transaction still open when A looks for
    // due webhooks (a wide version of the moment between A's select and A's update).
    const b = new pg.Client({ connectionString: url });
    await b.connect();
    await b.query("begin");
    await b.query(
      `update video_tasks set webhook_attempts = $2, webhook_state = 'delivered',
         webhook_next_at = null, lease_owner = null, lease_until = 0, updated_at = $3
       where id = $1`,
      [id, JSON.stringify([{ at: Date.now(), status: 204, durationMs: 3 }]), Date.now()],
    );

    const sent: string[] = [];
    const webhooks: WebhookDispatcher = {
      async deliver(event) {
        sent.push(event.eventId);
        return { ok: true, status: 204, durationMs: 1 };
      },
      retryDelayMs: () => 10_000,
      givesUp: () => false,
      newSecret: () => "whsec_test",
    };
    const engineA = startVideoEngine({
      store,
      models: { get: () => undefined },
      videoModel: () => undefined,
      webhooks,
      logger: { info() {}, warn() {} },
      clock: () => Date.now() + 1_000,
      instanceId: "inst-a",
      options: {
        tickMs: 1e9,
        pollMinIntervalMs: 1000,
        pollMaxIntervalMs: 1000,
        maxAgeMs: 1e9,
        submitGraceMs: 1000,
        leaseMs: 15_000,
        webhookLeaseMs: 15_000,
        vendorPollsPerSecond: () => 1,
        batchSize: 10,
        singleProcess: false,
      },
    });
    // A has read the due ids and waits on the row B is writing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await b.query("commit");
    await b.end();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await engineA.runOnce();
    await engineA.stop();
    const after = await store.findVideoTaskById(id);
    expect({ sentByA: sent.length, attempts: after?.webhookAttempts.length }).toEqual({
      sentByA: 0,
      attempts: 1,
    });
  });
});
