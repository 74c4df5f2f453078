/**
 * The scale-out paths against misbehaving infrastructure: several gateway instances (in this
 * process) sharing one PostgreSQL database and one Redis, with trouble underneath one of them
 * (its Redis or PostgreSQL connection cut through a TCP proxy, a Redis restart or stall). Each
 * test states the correct behaviour and failed before its fix. PostgreSQL + Redis only.
 */
import { mkdtempSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { randomBase62 } from "../src/store/index.ts";
import { clusterAvailable, freshDatabase, startRedisServer } from "./support/cluster.ts";
import { requestsTo } from "./support/gateway-harness.ts";
import { REDIS_URL } from "./support/redis.ts";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.ts";

const available = (await clusterAvailable()) && process.env.SWITCHYARD_TEST_BACKEND === "postgres";

interface Instance {
  gateway: RunningGateway;
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One gateway instance in this process, on `databaseUrl` and `redisUrl`. */
async function instance(
  databaseUrl: string,
  redisUrl: string,
  prefix: string,
  overrides: Record<string, unknown> = {},
): Promise<Instance> {
  const config = loadConfig({
    env: {},
    cwd: mkdtempSync(join(tmpdir(), "switchyard-scaleout-")),
    overrides: {
      database_url: databaseUrl,
      redis: { url: redisUrl, key_prefix: prefix, ...(overrides.redis as object) },
      log_level: "silent",
      server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
      routing: { circuit_breaker: { enabled: false } },
      ...Object.fromEntries(Object.entries(overrides).filter(([name]) => name !== "redis")),
    },
  });
  const gateway = await startGateway({ env: {}, config, print: () => {} });
  cleanups.push(() => gateway.close());
  return { gateway, request: requestsTo(gateway.url) };
}

async function database() {
  const db = await freshDatabase();
  cleanups.unshift(() => db.drop()); // dropped last, after every gateway closed
  return db;
}

async function proxyTo(port: number, host = "127.0.0.1"): Promise<TcpProxy> {
  const proxy = await startTcpProxy({ host, port });
  cleanups.push(() => proxy.close());
  return proxy;
}

async function user(
  admin: Instance,
  adminKey: string,
  balanceMicros: number,
  keyOptions: Record<string, unknown> = {},
) {
  const account = await admin.request("/v1/admin/accounts", {
    key: adminKey,
    json: { email: `u-${randomBase62(8)}@example.com`, balance_micros: balanceMicros },
  });
  expect(account.status).toBe(201);
  const { id } = (await account.json()) as { id: string };
  const created = await admin.request(`/v1/admin/accounts/${id}/keys`, {
    key: adminKey,
    json: keyOptions,
  });
  expect(created.status).toBe(201);
  const body = (await created.json()) as { key: string; id: string };
  return { accountId: id, key: body.key, keyId: body.id };
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

const pgPort = () =>
  Number(new URL(process.env.TEST_POSTGRES_URL ?? "postgres://x@127.0.0.1:5432/test").port || 5432);
const redisPort = () => Number(new URL(REDIS_URL).port || 6379);

/**
 * A Redis server, once past the first seconds of its life in which instances under
 * `on_unavailable: closed` hold concurrency checks back (they cannot tell a first start from a
 * restart that lost the running requests' leases).
 */
async function settledRedisServer(port?: number) {
  const server = await startRedisServer(port);
  await sleep(CLOSED_WARM_UP_MS);
  return server;
}
/** The Redis quotas' warm-up under `closed`: a third of a 15 s lease slice, and a second. */
const CLOSED_WARM_UP_MS = 6_100;

describe.skipIf(!available)(
  "scale-out, hostile: infrastructure faults",
  { timeout: 90_000 },
  () => {
    it("a key revoked through an instance whose Redis link is down is refused by the other instances within a second", async () => {
      // Attack: a leaked key is revoked through instance A at a moment A's Redis connection is
      // down (a blip, a Redis failover, a network partition of A only). A's publish of the
      // invalidation fails and is never sent again; instance B's subscription is up the whole
      // time, so B keeps trusting its cached lookup for auth.key_cache_ttl_seconds (60 s), not
      // the documented "within a second" — the attacker keeps spending through B.
      const db = await database();
      const prefix = `scaleout-${randomBase62(8)}:`;
      const b = await instance(db.url, REDIS_URL, prefix);
      const adminKey = b.gateway.bootstrapKey!;
      const proxy = await proxyTo(redisPort());
      const a = await instance(db.url, `redis://127.0.0.1:${proxy.port}`, prefix);
      const victim = await user(b, adminKey, 10_000_000);
      // B has the key cached; Redis is up for B throughout.
      expect((await b.request("/v1/account", { key: victim.key })).status).toBe(200);
      await proxy.down(); // A alone loses Redis
      await sleep(300);
      const revoked = await a.request(`/v1/admin/keys/${victim.keyId}/revoke`, {
        key: adminKey,
        method: "POST",
      });
      expect(revoked.status).toBe(200);
      await proxy.up();
      await sleep(2_500); // well past "within a second", and A's Redis is back
      expect((await a.request("/v1/account", { key: victim.key })).status).toBe(401);
      const onB = await b.request("/v1/account", { key: victim.key });
      expect(onB.status, "revoked key still accepted by instance B").toBe(401);
    });

    it("does not deliver an answer a peer settled as failed while its instance was cut off from PostgreSQL", async () => {
      // Attack / infrastructure fault: instance A loses its PostgreSQL connection (a partition of
      // A only) while it waits for an upstream answer it already holds money for. A's heartbeat
      // stops, so instance B's sweep takes A for dead after instance_timeout_seconds and settles
      // A's in-flight request as "failed", charging 0 and releasing the hold. A is alive: its
      // connection comes back, it gets the answer, its settlement finds the request closed, and it
      // delivers the full answer anyway — free. A hostile client who can time requests to such an
      // event (or simply a flaky network between one instance and the database) gets free output.
      const db = await database();
      const prefix = `scaleout-${randomBase62(8)}:`;
      const billing = { billing: { instance_timeout_seconds: 5 } };
      const b = await instance(db.url, REDIS_URL, prefix, billing);
      const adminKey = b.gateway.bootstrapKey!;
      const proxy = await proxyTo(pgPort());
      const viaProxy = new URL(db.url);
      viaProxy.hostname = "127.0.0.1";
      viaProxy.port = String(proxy.port);
      const a = await instance(viaProxy.toString(), REDIS_URL, prefix, billing);
      const payer = await user(b, adminKey, 10_000_000);
      const answer = a.request("/v1/chat/completions", {
        key: payer.key,
        json: {
          model: "gpt-4o-mini",
          max_tokens: 300,
          messages: [
            { role: "user", content: "[[sandbox:delay=14000;words=200]] tell me a story" },
          ],
        },
      });
      // The hold is placed (the request is in flight on A), then A is cut off from PostgreSQL.
      for (let i = 0; i < 50; i++) {
        const rows = await query<{ n: string }>(
          db.url,
          "select count(*) as n from inflight_requests",
        );
        if (Number(rows[0]?.n) > 0) break;
        await sleep(100);
      }
      await proxy.down();
      await sleep(8_000); // > instance_timeout_seconds, and a sweep of B's
      await proxy.up();
      const response = await answer;
      const body = (await response.json()) as { error?: { code?: string } };
      const requestId = response.headers.get("x-request-id");
      await sleep(1_000);
      // B's recovery closed the request as failed (nothing was delivered): A does not deliver
      // the answer on top of that closing, and the request stays charged nothing.
      expect({ status: response.status, code: body.error?.code }).toEqual({
        status: 503,
        code: "request_abandoned",
      });
      const records = await query<{ cost_micros: string; status: string }>(
        db.url,
        "select cost_micros, status from usage_records where request_id = $1",
        [requestId],
      );
      expect(records.map((row) => ({ status: row.status, cost: Number(row.cost_micros) }))).toEqual(
        [{ status: "failed", cost: 0 }],
      );
    });
    it("stops a stream a peer settled while its instance was cut off from PostgreSQL", async () => {
      // The stream's version of the case above: instance A streams a long answer, loses
      // PostgreSQL past instance_timeout_seconds, and B settles the request at its last
      // checkpoint. When A's connection is back, its next checkpoint finds the request's
      // in-flight row gone: it stops the stream there instead of delivering the rest free.
      const db = await database();
      const prefix = `scaleout-${randomBase62(8)}:`;
      const settings = { billing: { instance_timeout_seconds: 5, checkpoint_seconds: 1 } };
      const b = await instance(db.url, REDIS_URL, prefix, settings);
      const adminKey = b.gateway.bootstrapKey!;
      const proxy = await proxyTo(pgPort());
      const viaProxy = new URL(db.url);
      viaProxy.hostname = "127.0.0.1";
      viaProxy.port = String(proxy.port);
      const a = await instance(viaProxy.toString(), REDIS_URL, prefix, settings);
      const payer = await user(b, adminKey, 10_000_000);
      const response = await a.request("/v1/chat/completions", {
        key: payer.key,
        json: {
          model: "gpt-4o-mini",
          max_tokens: 400,
          stream: true,
          messages: [{ role: "user", content: "[[sandbox:chunk-delay=100;words=300]] a story" }],
        },
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get("x-request-id");
      const text = response.text();
      await sleep(1_500); // delivering, with a checkpoint or two written
      await proxy.down();
      await sleep(8_000); // > instance_timeout_seconds, and a sweep of B's
      await proxy.up();
      const body = await text;
      await sleep(1_500);
      // The answer (300 words at 100 ms a chunk: ~30 s) was cut short, not delivered to its end.
      expect(body).not.toContain('"finish_reason":"stop"');
      expect(body).not.toContain("[DONE]");
      const closings = await query<{ kind: string; cost: string }>(
        db.url,
        "select kind, -amount_micros as cost from ledger_entries where request_id = $1 and kind in ('charge', 'release')",
        [requestId],
      );
      expect(closings).toHaveLength(1);
    });

    it("keeps a concurrency limit across instances right after a Redis restart", async () => {
      // Infrastructure fault: Redis restarts (no persistence, as the cluster helper runs it) while
      // a key with concurrency 1 has a long stream running on instance A. The stream's lease is
      // gone from Redis and is only put back by A's next periodic renewal (every 5 s). Until then
      // instance B admits a second request of the same key as soon as Redis answers again, even
      // with on_unavailable: closed (which refused everything while Redis was away): the limit
      // that must hold across instances is exceeded right after the outage.
      const db = await database();
      const redis = await settledRedisServer();
      let current = redis;
      cleanups.push(() => current.stop());
      const prefix = `scaleout-${randomBase62(8)}:`;
      const closed = { redis: { on_unavailable: "closed" } };
      const a = await instance(db.url, redis.url, prefix, closed);
      const adminKey = a.gateway.bootstrapKey!;
      const b = await instance(db.url, redis.url, prefix, closed);
      const payer = await user(a, adminKey, 10_000_000, { concurrency: 1 });
      const chat = (content: string, extra: Record<string, unknown> = {}) => ({
        model: "gpt-4o-mini",
        max_tokens: 200,
        messages: [{ role: "user", content }],
        ...extra,
      });
      const abort = new AbortController();
      cleanups.push(async () => abort.abort());
      const stream = await a.request("/v1/chat/completions", {
        key: payer.key,
        json: chat("[[sandbox:chunk-delay=500;words=60]] a long story", { stream: true }),
        signal: abort.signal,
      });
      expect(stream.status).toBe(200);
      const reading = stream.text().catch(() => "");
      // The limit holds across instances before the restart.
      expect(
        (await b.request("/v1/chat/completions", { key: payer.key, json: chat("hi") })).status,
      ).toBe(429);
      await redis.stop();
      current = await startRedisServer(redis.port);
      // B refuses (503 quota_unavailable) until it reaches Redis again; its first admission
      // decision after that must still see A's running stream.
      let status = 503;
      const deadline = Date.now() + 10_000;
      while (status === 503 && Date.now() < deadline) {
        await sleep(25);
        status = (await b.request("/v1/chat/completions", { key: payer.key, json: chat("hi") }))
          .status;
      }
      abort.abort();
      await reading;
      expect(
        status,
        "a second request of a concurrency-1 key admitted while the first streams",
      ).toBe(429);
    });
    it("keeps a concurrency limit for an instance that starts right after a Redis restart", async () => {
      // Infrastructure fault: Redis restarts (no persistence) while a key with concurrency 1 has a
      // long stream running on instance A, and A cannot reach it yet (its link is cut, or its
      // reconnection backs off) so its lease is not back. Instance C starts right then: its
      // first connection used to write the restart marker as "no warm-up", so the lost lease
      // counted as never taken and C admitted a second request of the key. An instance must not
      // mistake a Redis that just lost its data for one that has kept it.
      const db = await database();
      const redis = await settledRedisServer();
      let current = redis;
      cleanups.push(() => current.stop());
      const link = await proxyTo(redis.port);
      const prefix = `scaleout-${randomBase62(8)}:`;
      const closed = { redis: { on_unavailable: "closed" } };
      const a = await instance(db.url, `redis://127.0.0.1:${link.port}`, prefix, closed);
      const adminKey = a.gateway.bootstrapKey!;
      const payer = await user(a, adminKey, 10_000_000, { concurrency: 1 });
      const chat = (content: string, extra: Record<string, unknown> = {}) => ({
        model: "gpt-4o-mini",
        max_tokens: 200,
        messages: [{ role: "user", content }],
        ...extra,
      });
      const abort = new AbortController();
      cleanups.push(async () => abort.abort());
      const stream = await a.request("/v1/chat/completions", {
        key: payer.key,
        json: chat("[[sandbox:chunk-delay=500;words=60]] a long story", { stream: true }),
        signal: abort.signal,
      });
      expect(stream.status).toBe(200);
      const reading = stream.text().catch(() => "");
      await link.down();
      await redis.stop();
      current = await startRedisServer(redis.port);
      const c = await instance(db.url, redis.url, prefix, closed);
      const status = (await c.request("/v1/chat/completions", { key: payer.key, json: chat("hi") }))
        .status;
      await link.up();
      abort.abort();
      await reading;
      expect(
        status,
        "a second request of a concurrency-1 key admitted while the first streams",
      ).not.toBe(200);
      // Once the warm-up is over (A has put its lease back), C enforces the limit, then admits.
      await sleep(6_500);
      expect(
        (await c.request("/v1/chat/completions", { key: payer.key, json: chat("hi") })).status,
      ).toBe(200);
    });
    it("does not leave a concurrency slot taken by a request Redis answered too late for", async () => {
      // Infrastructure fault: Redis stalls for a moment (a slow command, a fork for a snapshot, a
      // failover) longer than redis.command_timeout_ms. The gateway gives up on the admission
      // script and refuses the request (on_unavailable: closed: 503), but the script was sent and
      // runs once Redis resumes: it records a concurrency lease (and an rpm admission) that no
      // request owns, which nothing releases or renews. A concurrency-1 key is then refused
      // (429 concurrency_limited) on every instance for the lease's 15 s with nothing running.
      const db = await database();
      const redis = await settledRedisServer();
      cleanups.push(() => redis.stop());
      const prefix = `scaleout-${randomBase62(8)}:`;
      const a = await instance(db.url, redis.url, prefix, { redis: { on_unavailable: "closed" } });
      const adminKey = a.gateway.bootstrapKey!;
      const payer = await user(a, adminKey, 10_000_000, { concurrency: 1 });
      const chat = {
        model: "gpt-4o-mini",
        max_tokens: 20,
        messages: [{ role: "user", content: "hi" }],
      };
      expect((await a.request("/v1/chat/completions", { key: payer.key, json: chat })).status).toBe(
        200,
      );
      // Another client of the same Redis runs a script that keeps the server busy for 1.2 s.
      const other = new Redis(redis.url);
      cleanups.push(async () => other.disconnect());
      const busy = other.eval(
        `local t = redis.call('TIME'); local start = t[1] * 1000000 + t[2]
       repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start > 1200000
       return 1`,
        0,
      );
      await sleep(100);
      const stalled = await a.request("/v1/chat/completions", { key: payer.key, json: chat });
      expect(stalled.status).toBe(503); // refused: Redis did not answer in time
      await busy;
      await sleep(200);
      // Nothing of this key runs now; its one slot must be free.
      const next = await a.request("/v1/chat/completions", { key: payer.key, json: chat });
      expect(next.status, "a concurrency-1 key with nothing in flight was refused").toBe(200);
    });
    it("delivers, and charges once, an answer whose settlement committed but whose reply was lost", async () => {
      // Infrastructure fault: the PostgreSQL connection drops after the settlement statement
      // committed but before its reply reached the gateway (a network cut, a proxy/pgbouncer
      // restart at the worst moment). The gateway takes the settlement for refused, the client
      // gets an error instead of the answer, and the release that should replace the settlement
      // finds the request already closed and does nothing: the client is charged in full for a
      // request that failed.
      const db = await database();
      const prefix = `scaleout-${randomBase62(8)}:`;
      // A proxy to PostgreSQL that, once armed, lets the closing statement through but cuts the
      // connection instead of passing its reply back.
      let armed = false;
      const sockets = new Set<Socket>();
      const server = createServer((client) => {
        const upstream = connect(pgPort(), "127.0.0.1");
        sockets.add(client);
        sockets.add(upstream);
        let cutOnReply = false;
        const cut = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on("error", cut);
        upstream.on("error", cut);
        client.on("close", cut);
        upstream.on("close", cut);
        client.on("data", (chunk: Buffer) => {
          if (armed && chunk.includes("with recursive found as")) {
            armed = false;
            cutOnReply = true;
          }
          upstream.write(chunk);
        });
        upstream.on("data", (chunk: Buffer) => {
          if (cutOnReply) cut();
          else client.write(chunk);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      cleanups.push(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      });
      const viaProxy = new URL(db.url);
      viaProxy.hostname = "127.0.0.1";
      viaProxy.port = String((server.address() as { port: number }).port);
      const a = await instance(viaProxy.toString(), REDIS_URL, prefix);
      const adminKey = a.gateway.bootstrapKey!;
      const payer = await user(a, adminKey, 10_000_000);
      const balance = async () =>
        Number(
          (
            await query<{ b: string }>(
              db.url,
              "select balance_micros as b from accounts where id = $1",
              [payer.accountId],
            )
          )[0]?.b,
        );
      const before = await balance();
      armed = true;
      const response = await a.request("/v1/chat/completions", {
        key: payer.key,
        json: { model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "hi" }] },
      });
      const text = await response.text();
      expect(armed, "the settlement statement went through the proxy").toBe(false);
      await sleep(2_500); // the gateway's retry of refused closings (1 s later, on its sweep)
      const after = await balance();
      // The settlement did commit: the answer is delivered, and charged exactly once.
      expect(response.status, text.slice(0, 200)).toBe(200);
      const usage = (JSON.parse(text) as { usage: { completion_tokens: number } }).usage;
      expect(usage.completion_tokens).toBeGreaterThan(0);
      const charges = await query<{ n: string; cost: string }>(
        db.url,
        "select count(*) as n, -sum(amount_micros) as cost from ledger_entries where request_id = $1 and kind = 'charge'",
        [response.headers.get("x-request-id")],
      );
      expect(Number(charges[0]?.n)).toBe(1);
      expect(before - after).toBe(Number(charges[0]?.cost));
      expect(before - after).toBeGreaterThan(0);
    });
  },
);
