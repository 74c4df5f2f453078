/**
 * The money invariants as a property: random sequences of chat and Messages requests (streamed
 * or not, with vendor faults, client aborts and small balances) and gateway restarts, over several
 * accounts. Afterwards every balance is ≥ 0, no charge exceeds its hold, the charges in the
 * ledger equal the costs in the usage records, nothing is left held or in flight, and the ledger
 * verifies.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { openStore } from "../src/store/index.ts";

const ADMIN_KEY = `sk-${"Property".repeat(6)}`;

const Fault = fc.constantFrom("", "status=500", "drop=3", "drop=9", "malformed=4", "no-usage");
const Request = fc.record({
  kind: fc.constant("request" as const),
  account: fc.nat({ max: 2 }),
  api: fc.constantFrom("chat", "messages-native", "messages-translated"),
  stream: fc.boolean(),
  // Mostly short replies; sometimes far more than a small balance pays for (the output cap and
  // the hold must bound them).
  words: fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 400 }), weight: 4 },
    { arbitrary: fc.integer({ min: 5_000, max: 60_000 }), weight: 1 },
  ),
  maxTokens: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: undefined }),
  fault: Fault,
  abortAfterMs: fc.option(fc.integer({ min: 0, max: 80 }), { nil: undefined }),
});
const Restart = fc.record({ kind: fc.constant("restart" as const) });
const Step = fc.oneof({ arbitrary: Request, weight: 9 }, { arbitrary: Restart, weight: 1 });
type RequestStep = typeof Request extends fc.Arbitrary<infer T> ? T : never;

function bodyOf(step: RequestStep): { path: string; body: Record<string, unknown> } {
  const pace = step.words <= 400 ? ";chunk-delay=2" : "";
  const directive = `[[sandbox:words=${step.words}${pace}${step.fault ? `;${step.fault}` : ""}]]`;
  if (step.api === "chat") {
    return {
      path: "/v1/chat/completions",
      body: {
        model: "gpt-4o-mini",
        stream: step.stream,
        ...(step.maxTokens === undefined ? {} : { max_tokens: step.maxTokens }),
        messages: [{ role: "user", content: `${directive} tell me something` }],
      },
    };
  }
  return {
    path: "/v1/messages",
    body: {
      model: step.api === "messages-native" ? "claude-haiku-4-5" : "gpt-4o-mini",
      stream: step.stream,
      max_tokens: step.maxTokens ?? 8_000,
      messages: [{ role: "user", content: `${directive} tell me something` }],
    },
  };
}

async function send(gateway: RunningGateway, key: string, step: RequestStep): Promise<void> {
  const { path, body } = bodyOf(step);
  const controller = new AbortController();
  const timer =
    step.abortAfterMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(), step.abortAfterMs);
  try {
    const response = await fetch(gateway.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    // Refusals (402, 429) and upstream failures (502) are fine; a crash of the gateway is not.
    expect(response.status).not.toBe(500);
    await response.text();
  } catch {
    // The client gave up (abort) or the gateway restarted under it.
  } finally {
    clearTimeout(timer);
  }
}

describe("money invariants hold over random traffic, faults, aborts and restarts", () => {
  it("keeps every balance ≥ 0, every charge ≤ its hold, and the ledger equal to the usage", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 3, maxLength: 3 }),
        fc.array(Step, { minLength: 4, maxLength: 24 }),
        async (balances, steps) => {
          const cwd = mkdtempSync(join(tmpdir(), "switchyard-money-"));
          const databaseUrl = join(cwd, "gateway.sqlite");
          const start = () =>
            startGateway({
              env: { SWITCHYARD_ADMIN_KEY: ADMIN_KEY },
              config: loadConfig({
                env: {},
                cwd,
                overrides: {
                  database_url: databaseUrl,
                  log_level: "silent",
                  server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
                },
              }),
              print: () => {},
            });
          let gateway = await start();
          const keys: string[] = [];
          for (const [index, balance] of balances.entries()) {
            const created = await fetch(`${gateway.url}/v1/admin/accounts`, {
              method: "POST",
              headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
              body: JSON.stringify({ email: `p${index}@example.com`, balance_micros: balance }),
            }).then((response) => response.json() as Promise<{ id: string }>);
            const key = await fetch(`${gateway.url}/v1/admin/accounts/${created.id}/keys`, {
              method: "POST",
              headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
              body: "{}",
            }).then((response) => response.json() as Promise<{ key: string }>);
            keys.push(key.key);
          }
          // Requests run in concurrent batches; a restart waits for nothing (connections cut).
          let batch: Promise<void>[] = [];
          for (const step of steps) {
            if (step.kind === "restart") {
              gateway.app.server.closeAllConnections();
              await Promise.all(batch);
              batch = [];
              await gateway.close();
              gateway = await start();
              continue;
            }
            batch.push(send(gateway, keys[step.account]!, step));
            if (batch.length >= 4) {
              await Promise.all(batch);
              batch = [];
            }
          }
          await Promise.all(batch);
          await gateway.close();

          const db = new Database(databaseUrl, { readonly: true });
          try {
            const accounts = db
              .prepare("select id, balance_micros, held_micros from accounts")
              .all() as Array<{ id: string; balance_micros: number; held_micros: number }>;
            for (const account of accounts) {
              expect(account.balance_micros).toBeGreaterThanOrEqual(0);
              expect(account.held_micros).toBe(0);
            }
            const overCharged = db
              .prepare("select count(*) as n from usage_records where cost_micros > held_micros")
              .get() as { n: number };
            expect(overCharged.n).toBe(0);
            const charges = db
              .prepare(
                "select coalesce(-sum(amount_micros), 0) as total from ledger_entries where kind = 'charge'",
              )
              .get() as { total: number };
            const costs = db
              .prepare("select coalesce(sum(cost_micros), 0) as total from usage_records")
              .get() as { total: number };
            expect(charges.total).toBe(costs.total);
            const inflight = db.prepare("select count(*) as n from inflight_requests").get() as {
              n: number;
            };
            expect(inflight.n).toBe(0);
          } finally {
            db.close();
          }
          const store = await openStore(databaseUrl);
          try {
            expect((await store.verify()).problems).toEqual([]);
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 6, endOnFailure: true },
    );
  }, 180_000);
});
