/**
 * @module bench/store
 * `npm run bench:store`: what the durable ledger costs per model request, alone. Opens a store
 * (a fresh SQLite file unless `DATABASE_URL` names another database), then runs rounds of
 * requests the way the gateway does: a hold for each, then the settlement of each (ledger row,
 * balance, usage record, spend day rows), `BENCH_STORE_BATCH` requests at a time, so on SQLite the
 * group commit puts that many bodies in one transaction (about 6 under load; 1 is a gateway one
 * request at a time). Prints the process CPU time (user + system) per request, and the holds'
 * share, for each round.
 *
 *   npm run bench:store
 *
 * Knobs: `BENCH_STORE_BATCH` (6), `BENCH_STORE_ROUNDS` (5), `BENCH_STORE_REQUESTS` (6000 per
 * round), `DATABASE_URL`. On PostgreSQL the figure is the gateway's side only (the server's CPU
 * is another process's).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId, openStore, type UsageRecord } from "../src/store/index.ts";

const BATCH = Number(process.env.BENCH_STORE_BATCH ?? 6);
const ROUNDS = Number(process.env.BENCH_STORE_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_STORE_REQUESTS ?? 6000);
const url =
  process.env.DATABASE_URL ?? join(mkdtempSync(join(tmpdir(), "switchyard-store-")), "s.sqlite");

const store = await openStore(url);
const account = await store.createAccount({
  email: `bench-${newId("")}@example.com`,
  passwordHash: null,
  role: "user",
});
await store.adjustBalance({ accountId: account.id, amountMicros: 1e12, reason: "bench" });
const key = await store.createKey({
  accountId: account.id,
  name: "bench",
  keyHash: newId("hash"),
  prefix: "sk-bench",
  models: [],
});

/** A chat completion's usage record, as the billing service writes it. */
function usage(requestId: string): UsageRecord {
  return {
    requestId,
    accountId: account.id,
    keyId: key.id,
    model: "gpt-4o-mini",
    endpoint: "/v1/chat/completions",
    status: "succeeded",
    inputTokens: 12,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 30,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: 0,
    characters: 0,
    costMicros: 25,
    heldMicros: 1000,
    usageSource: "upstream",
    upstreamRequestId: "upstream-1",
    latencyMs: 3,
    ttfbMs: 2,
    breakdown: { input: 5, output: 20 },
    createdAt: Date.now(),
  };
}

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** Runs `count` requests; returns the CPU microseconds spent on their holds. */
async function run(count: number): Promise<number> {
  let holds = 0;
  for (let done = 0; done < count; done += BATCH) {
    const ids = Array.from({ length: BATCH }, () => newId("req"));
    const before = cpu();
    await Promise.all(
      ids.map((requestId) =>
        store.placeHold({
          requestId,
          accountId: account.id,
          keyId: key.id,
          model: "gpt-4o-mini",
          endpoint: "/v1/chat/completions",
          instanceId: "bench",
          floorMicros: 0,
          amountMicros: 1000,
        }),
      ),
    );
    holds += cpu() - before;
    await Promise.all(ids.map((requestId) => store.settle(usage(requestId))));
  }
  return holds;
}

await run(REQUESTS / 2); // warm-up
process.stdout.write(`store on ${store.dialect}, ${BATCH} request(s) per batch\n`);
for (let round = 1; round <= ROUNDS; round += 1) {
  const before = cpu();
  const holds = await run(REQUESTS);
  const total = cpu() - before;
  process.stdout.write(
    `round ${round}: ${(total / REQUESTS).toFixed(1)} µs CPU per request ` +
      `(hold ${(holds / REQUESTS).toFixed(1)}, settlement ${((total - holds) / REQUESTS).toFixed(1)})\n`,
  );
}
await store.close();
