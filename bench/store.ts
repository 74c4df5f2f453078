/**
 * @module bench/store
 * `npm run bench:store`: what the durable ledger costs per model request, alone. Opens a store
 * (a fresh SQLite file unless `DATABASE_URL` names another database), then runs rounds of
 * requests the way the gateway does: a hold for each, then the settlement of each (ledger row,
 * balance, usage record, spend day rows), `BENCH_STORE_BATCH` requests at a time, so on SQLite the
 * group commit puts that many bodies in one transaction (about 6 under load; 1 is a gateway one
 * request at a time). Prints the process CPU time (user + system) per request, and the holds'
 * share, for each round; on SQLite then the WAL frames a batch of settlements writes, by the
 * table or index each frame's page belongs to (what a commit costs is mostly those frames).
 *
 *   npm run bench:store
 *
 * Knobs: `BENCH_STORE_BATCH` (6), `BENCH_STORE_ROUNDS` (5), `BENCH_STORE_REQUESTS` (6000 per
 * round), `DATABASE_URL` (a database of its own: the bench migrates it and leaves its rows). On
 * PostgreSQL the figure is the gateway's side only (the server's CPU is another process's).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { newId, openStore, sortableBase62, type UsageRecord } from "../src/store/index.ts";

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
    // Request ids as the gateway makes them (src/http/server.ts).
    const ids = Array.from({ length: BATCH }, () => `req_${sortableBase62(20)}`);
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
if (store.dialect === "sqlite") {
  // Which B-trees a settlement batch writes: restart the WAL, run 50 batches, and map the page
  // of every frame the WAL then holds to its table or index (SQLite's `dbstat`).
  const side = new SQLite(url);
  side.pragma("wal_checkpoint(TRUNCATE)");
  const batches = 50;
  await run(batches * BATCH);
  const wal = readFileSync(`${url}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const framesByPage = new Map<number, number>();
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at);
    framesByPage.set(page, (framesByPage.get(page) ?? 0) + 1);
    frames += 1;
  }
  const owner = new Map<number, string>();
  for (const row of side.prepare("select name, pageno from dbstat").all() as Array<{
    name: string;
    pageno: number;
  }>)
    owner.set(row.pageno, row.name);
  const byTree = new Map<string, number>();
  for (const [page, count] of framesByPage) {
    const name = page === 1 ? "(the header page)" : (owner.get(page) ?? "(a page freed since)");
    byTree.set(name, (byTree.get(name) ?? 0) + count);
  }
  process.stdout.write(
    `WAL frames: ${(frames / batches).toFixed(1)} per batch of settlements, ` +
      `${(frames / (batches * BATCH)).toFixed(2)} per request; per batch by table or index:\n`,
  );
  for (const [name, count] of [...byTree].sort((a, b) => b[1] - a[1]))
    process.stdout.write(`  ${(count / batches).toFixed(2)}  ${name}\n`);
  side.close();
}
await store.close();
