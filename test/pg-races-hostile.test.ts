/**
 * Concurrency races on the money and account administration paths of a shared PostgreSQL
 * database, as a client or reseller firing many requests at once. Each test states the correct
 * behaviour and failed before its fix. Runs in the PostgreSQL pass only (SQLite serializes
 * every write in one process, and its ledger check runs in the command line's own process).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createUser,
  startTestGateway,
  TEST_BACKEND,
  type TestGateway,
} from "./support/gateway-harness.ts";

const CHAT = { model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };

describe.skipIf(TEST_BACKEND !== "postgres")(
  "PostgreSQL races, hostile: money and administration",
  () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startTestGateway({
        config: { webhooks: { allow_loopback: true } },
      });
    });
    afterAll(() => gateway.close());

    // Attack: none needed, only ordinary traffic. docs/configuration.md says "Run `switchyard
    // ledger verify` against the shared database at any time". verifyLedger reads the accounts
    // in one statement and the ledger sums in another, outside any transaction (READ COMMITTED,
    // a fresh snapshot per statement). Every credit, hold or charge committed between the two
    // reads shows up as a balance_mismatch / held_mismatch that does not exist: the tool exits 1
    // on a healthy ledger, so operators learn to ignore it (or page on phantom fraud).
    it("ledger verify run while requests and credits flow reports no problem on a consistent ledger", async () => {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      let stop = false;
      const traffic = async (worker: number) => {
        while (!stop) {
          if (worker % 2 === 0) {
            await gateway
              .request(`/v1/admin/accounts/${user.accountId}/credit`, {
                key: gateway.adminKey,
                json: { amount_micros: 1, reason: "race" },
              })
              .then((r) => r.arrayBuffer());
          } else {
            await gateway
              .request("/v1/chat/completions", { key: user.key, json: CHAT })
              .then((r) => r.arrayBuffer());
          }
        }
      };
      const workers = Array.from({ length: 6 }, (_, i) => traffic(i));
      const problems: string[] = [];
      try {
        for (let run = 0; run < 40 && problems.length === 0; run++) {
          const report = await gateway.services.store.verify();
          for (const problem of report.problems)
            problems.push(`run ${run}: ${problem.kind} ${problem.accountId}: ${problem.detail}`);
        }
      } finally {
        stop = true;
        await Promise.all(workers);
      }
      // Once the traffic has stopped the ledger is consistent: the problems above were phantoms.
      const quiet = await gateway.services.store.verify();
      expect(quiet.problems).toEqual([]);
      expect(problems).toEqual([]);
    }, 120_000);

    // Attack: two PATCH /v1/account/budget requests at once that change different fields
    // (one sets `webhook_url`, the other `monthly_budget_micros`); "a field left out keeps its
    // value" (docs/budgets.md). setBudget reads the current row, merges in JS and upserts the
    // whole row, with no lock or condition: whichever commits last writes back the other field's
    // old value. Both answer 200 with their change, yet one change is silently lost (an alert
    // webhook dropped, or a budget reverted) — and the audit log records both as applied.
    it("concurrent budget PATCHes of different fields both take effect (no lost update)", async () => {
      const user = await createUser(gateway);
      const lost: string[] = [];
      for (let round = 0; round < 30 && lost.length === 0; round++) {
        const start = await gateway.request("/v1/account/budget", {
          key: user.key,
          method: "PATCH",
          json: { monthly_budget_micros: 1_000_000_000, webhook_url: null },
        });
        expect(start.status).toBe(200);
        const url = `http://127.0.0.1:9/hook-${round}`;
        const amount = 2_000_000_000 + round;
        const [a, b] = await Promise.all([
          gateway.request("/v1/account/budget", {
            key: user.key,
            method: "PATCH",
            json: { webhook_url: url },
          }),
          gateway.request("/v1/account/budget", {
            key: user.key,
            method: "PATCH",
            json: { monthly_budget_micros: amount },
          }),
        ]);
        expect([a.status, b.status]).toEqual([200, 200]);
        const now = (await (
          await gateway.request("/v1/account/budget", { key: user.key })
        ).json()) as {
          monthly_budget_micros: number | null;
          webhook_url: string | null;
        };
        if (now.monthly_budget_micros !== amount || now.webhook_url !== url)
          lost.push(
            `round ${round}: both PATCHes answered 200, budget is ${now.monthly_budget_micros} (want ${amount}), webhook ${now.webhook_url} (want ${url})`,
          );
      }
      expect(lost).toEqual([]);
    }, 120_000);
  },
);
