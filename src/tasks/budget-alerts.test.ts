/**
 * Budget alerts' webhook deliveries against a real store (SQLite, and PostgreSQL when one
 * answers): a failed attempt is retried on the schedule from the database, an instance that
 * stops mid-way leaves its deliveries to another once its lease runs out, two instances sweeping
 * at once deliver each alert once, and a delivery is given up after the schedule's limit.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { postgresReachable, throwawaySchema } from "../../test/support/postgres.ts";
import { chatUsageRecord } from "../../test/support/usage-record.ts";
import { openStore, type Store } from "../store/index.ts";
import { type BudgetAlerts, createBudgetAlerts } from "./budget-alerts.ts";
import type { WebhookDispatcher } from "./video-engine.ts";

const pgAvailable = await postgresReachable();
const LEASE_MS = 60_000;
const GIVE_UP_MS = 30_000;

interface Sent {
  url: string;
  body: string;
  eventId: string;
}

/** A dispatcher whose answers the test scripts: `true` delivered, `false` failed, `"hang"` never answers. */
function dispatcher(answers: Array<boolean | "hang">) {
  const sent: Sent[] = [];
  const webhooks: WebhookDispatcher = {
    async deliver({ url, body, eventId }) {
      sent.push({ url, body, eventId });
      const answer = answers.shift() ?? true;
      if (answer === "hang") return new Promise(() => {});
      return answer ? { ok: true, durationMs: 1 } : { ok: false, status: 503, durationMs: 1 };
    },
    retryDelayMs: (attempt) => attempt * 1_000,
    givesUp: (firstAt, now) => now - firstAt > GIVE_UP_MS,
    newSecret: () => "whsec_test",
  };
  return { webhooks, sent };
}

function suite(name: string, open: () => Promise<{ store: Store; cleanup(): Promise<void> }>) {
  describe(`budget webhooks on ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let now = Date.UTC(2027, 2, 10, 12);
    const running: BudgetAlerts[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await open());
    });
    afterAll(async () => {
      for (const alerts of running) alerts.stop();
      await store.close();
      await cleanup();
    });

    const instance = (webhooks: WebhookDispatcher) => {
      const alerts = createBudgetAlerts({
        store,
        webhooks,
        logger: pino({ level: "silent" }),
        clock: () => now,
        thresholds: () => [0.5],
        sweepMs: 0,
        leaseMs: LEASE_MS,
      });
      running.push(alerts);
      return alerts;
    };

    /** An account over half of its budget, with a webhook: one alert due. */
    async function overBudget(): Promise<string> {
      const account = await store.createAccount({
        email: `${Math.random()}@example.com`,
        passwordHash: null,
        role: "user",
      });
      await store.adjustBalance({ accountId: account.id, amountMicros: 10_000, reason: "test" });
      const requestId = `req_${account.id}`;
      await store.placeHold({
        requestId,
        accountId: account.id,
        keyId: "k",
        model: "m",
        endpoint: "/v1/chat/completions",
        instanceId: "test",
        floorMicros: 0,
        amountMicros: 1_000,
      });
      await store.settle(
        chatUsageRecord({
          requestId,
          accountId: account.id,
          keyId: null,
          costMicros: 600,
          heldMicros: 1_000,
          createdAt: now,
        }),
      );
      await store.setAccountBudget(account.id, {
        monthlyBudgetMicros: 1_000,
        webhookUrl: `https://hooks.example.com/${account.id}`,
      });
      return account.id;
    }

    it("retries a failed delivery on the schedule kept in the database", async () => {
      const { webhooks, sent } = dispatcher([false, false, true]);
      const alerts = instance(webhooks);
      const accountId = await overBudget();
      await alerts.check(accountId);
      await alerts.idle();
      expect(sent).toHaveLength(1);
      await alerts.sweep();
      expect(sent).toHaveLength(1); // not due before its delay (1 s after one failure)
      now += 1_000;
      await alerts.sweep();
      expect(sent).toHaveLength(2);
      now += 1_999;
      await alerts.sweep();
      expect(sent).toHaveLength(2);
      now += 1;
      await alerts.sweep();
      expect(sent).toHaveLength(3); // delivered
      now += 100_000;
      await alerts.sweep();
      expect(sent).toHaveLength(3);
      expect(new Set(sent.map((attempt) => attempt.body)).size).toBe(1);
      expect(sent[0]!.eventId).toMatch(new RegExp(`^evt_budget_${accountId}_\\d+_5000$`));
      expect(JSON.parse(sent[0]!.body)).toMatchObject({
        id: sent[0]!.eventId,
        type: "budget.threshold_reached",
        data: { account_id: accountId, threshold: 0.5 },
      });
    });

    it("leaves a stopped instance's delivery to another once its lease has run out", async () => {
      const first = dispatcher(["hang"]);
      const stopped = instance(first.webhooks);
      const accountId = await overBudget();
      await stopped.check(accountId);
      await vi.waitFor(() => expect(first.sent).toHaveLength(1));
      stopped.stop(); // as if the process died during its attempt
      const second = dispatcher([true]);
      const survivor = instance(second.webhooks);
      await survivor.sweep();
      expect(second.sent).toHaveLength(0); // the lease still runs
      now += LEASE_MS + 1;
      await survivor.sweep();
      expect(second.sent.map((attempt) => attempt.body)).toEqual(first.sent.map((a) => a.body));
      now += 100_000;
      await survivor.sweep();
      expect(second.sent).toHaveLength(1);
    });

    it("delivers each due alert once when two instances sweep at the same time", async () => {
      const failing = dispatcher([false]);
      const claimer = instance(failing.webhooks);
      const accountId = await overBudget();
      await claimer.check(accountId);
      await claimer.idle();
      claimer.stop();
      const a = dispatcher([true]);
      const b = dispatcher([true]);
      const [one, two] = [instance(a.webhooks), instance(b.webhooks)];
      now += 1_000;
      await Promise.all([one.sweep(), two.sweep(), one.sweep(), two.sweep()]);
      const retries = [...a.sent, ...b.sent].filter((attempt) => attempt.url.endsWith(accountId));
      expect(retries).toHaveLength(1);
    });

    it("gives a delivery up after the schedule's limit", async () => {
      const { webhooks, sent } = dispatcher(Array.from({ length: 50 }, () => false));
      const alerts = instance(webhooks);
      const accountId = await overBudget();
      await alerts.check(accountId);
      await alerts.idle();
      for (let step = 0; step < 40; step++) {
        now += 5_000;
        await alerts.sweep();
      }
      const attempts = sent.filter((attempt) => attempt.url.endsWith(accountId)).length;
      // 1 s, 2 s, … between attempts, none later than 30 s after the first.
      expect(attempts).toBeGreaterThan(3);
      expect(attempts).toBeLessThan(10);
      now += 1_000_000;
      await alerts.sweep();
      expect(sent.filter((attempt) => attempt.url.endsWith(accountId))).toHaveLength(attempts);
    });
  });
}

suite("SQLite", async () => {
  const directory = mkdtempSync(join(tmpdir(), "switchyard-budget-webhooks-"));
  return { store: await openStore(join(directory, "test.sqlite")), cleanup: async () => {} };
});

describe.skipIf(!pgAvailable)("PostgreSQL (skipped when no server answers)", () => {
  suite("PostgreSQL", async () => {
    const schema = await throwawaySchema("switchyard_budget_webhooks");
    return { store: await openStore(schema.url), cleanup: schema.drop };
  });
});
