/**
 * Several gateway processes on one PostgreSQL and one Redis keep the guarantees of one process:
 * a key's rpm and concurrency hold across both, the slots of a killed instance come back within
 * the lease time, a balance is never overdrawn by concurrent requests on both, a key revoked
 * through one is refused by the other within a second, so is a reload, video tasks polled by both are finalized,
 * billed and announced once each (and finished by the survivor when one is killed), and a Redis
 * restart under load is survived as `redis.on_unavailable` says.
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNT_SCRIPT } from "../src/limits/redis-scripts.ts";
import { connectRedis } from "../src/store/index.ts";
import { type Cluster, clusterAvailable, startCluster } from "./support/cluster.ts";
import { CLI, type SpawnedGateway } from "./support/spawn-gateway.ts";

const available = await clusterAvailable();

const CONFIG = `limits:
  lease_ttl_seconds: 3
billing:
  instance_timeout_seconds: 5
tasks:
  tick_ms: 50
  poll_min_interval_ms: 100
  poll_max_interval_ms: 300
  lease_seconds: 2
webhooks:
  allow_loopback: true
  retry_base_ms: 50
  retry_max_ms: 200
`;

type Call = { status: number; headers: Headers; body: Record<string, unknown> };

async function call(
  gateway: SpawnedGateway,
  path: string,
  key: string,
  json?: unknown,
  signal?: AbortSignal,
): Promise<Call> {
  const response = await fetch(gateway.url + path, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    ...(signal ? { signal } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const chat = (content: string) => ({
  model: "gpt-4o-mini",
  max_tokens: 20,
  messages: [{ role: "user", content }],
});

describe.skipIf(!available)(
  "two gateways on one PostgreSQL and one Redis",
  { timeout: 120_000 },
  () => {
    let cluster: Cluster;
    let a: SpawnedGateway;
    let b: SpawnedGateway;

    beforeAll(async () => {
      cluster = await startCluster(2, CONFIG);
      [a, b] = cluster.gateways as [SpawnedGateway, SpawnedGateway];
    }, 90_000);
    afterAll(async () => {
      await cluster?.close();
    });

    /** A user with one key, created through `via`. */
    async function user(keyOptions: Record<string, unknown>, balanceMicros = 100_000_000) {
      const account = await call(a, "/v1/admin/accounts", cluster.adminKey, {
        email: `u-${Math.random().toString(36).slice(2)}@example.com`,
        balance_micros: balanceMicros,
      });
      expect(account.status).toBe(201);
      const key = await call(
        a,
        `/v1/admin/accounts/${account.body.id}/keys`,
        cluster.adminKey,
        keyOptions,
      );
      expect(key.status).toBe(201);
      // Both instances look the key up once, so the bursts below reach their limiters together.
      for (const gateway of [a, b])
        expect((await call(gateway, "/v1/models", key.body.key as string)).status).toBe(200);
      return {
        accountId: account.body.id as string,
        key: key.body.key as string,
        keyId: key.body.id as string,
      };
    }

    async function inFlight(keyId: string): Promise<number> {
      const redis = await connectRedis({
        url: cluster.redis.url,
        prefix: cluster.redisPrefix,
        commandTimeoutMs: 1000,
      });
      try {
        return Number(
          await redis.run(COUNT_SCRIPT, [`${cluster.redisPrefix}quota:conc:${keyId}`], []),
        );
      } finally {
        await redis.close();
      }
    }

    it("admits exactly rpm requests across both", async () => {
      const { key } = await user({ rpm: 60 });
      const results = await Promise.all(
        Array.from({ length: 80 }, (_, i) =>
          call(i % 2 ? a : b, "/v1/chat/completions", key, chat(`rpm ${i}`)),
        ),
      );
      expect(results.filter((result) => result.status === 200)).toHaveLength(60);
      expect(results.filter((result) => result.status === 429)).toHaveLength(20);
    });

    it("never has more than the concurrency limit in flight across both", async () => {
      const { key, keyId } = await user({ concurrency: 5 });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call(
            i % 2 ? a : b,
            "/v1/chat/completions",
            key,
            chat(`[[sandbox:delay=2000]] slow ${i}`),
          ),
        ),
      );
      expect(results.filter((result) => result.status === 200)).toHaveLength(5);
      expect(results.filter((result) => result.status === 429)).toHaveLength(15);
      expect(await inFlight(keyId)).toBe(0);
    });

    it("never overdraws a balance that covers 50 requests, with 200 on both at once", async () => {
      const probe = await user({});
      const one = await call(a, "/v1/chat/completions", probe.key, chat("price"));
      const cost = Number(one.headers.get("x-switchyard-cost-micros"));
      expect(cost).toBeGreaterThan(0);
      const payer = await user({}, cost * 50);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          call(i % 2 ? a : b, "/v1/chat/completions", payer.key, chat("price")),
        ),
      );
      const served = results.filter((result) => result.status === 200);
      expect(served.length).toBeGreaterThan(0);
      expect(served.length).toBeLessThanOrEqual(50);
      expect(
        results.filter((result) => result.status !== 200).every((result) => result.status === 402),
      ).toBe(true);
      const balance = await call(b, "/v1/account/balance", payer.key);
      const left = balance.body.balance_micros as number;
      expect(left).toBeGreaterThanOrEqual(0);
      expect(balance.body.held_micros).toBe(0);

      const db = new pg.Client({ connectionString: cluster.databaseUrl });
      await db.connect();
      const records = await db.query(
        "SELECT cost_micros, held_micros FROM usage_records WHERE account_id = $1",
        [payer.accountId],
      );
      await db.end();
      expect(records.rows.length).toBe(served.length);
      for (const row of records.rows)
        expect(Number(row.cost_micros)).toBeLessThanOrEqual(Number(row.held_micros));
      // What left the balance is exactly what the usage records charged (summed, not multiplied:
      // the last requests may run with an output cap lowered to fit what is left, and cost less).
      const charged = records.rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
      expect(charged).toBe(cost * 50 - left);
      const verify = spawnSync(process.execPath, [CLI, "ledger", "verify"], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: cluster.databaseUrl },
        encoding: "utf8",
      });
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    });

    it("refuses a key revoked through one instance, and its minted child, on the other within a second", async () => {
      const parent = await user({});
      const minted = await call(a, "/v1/account/keys", parent.key, { name: "child" });
      expect(minted.status).toBe(201);
      const child = minted.body.key as string;
      for (const key of [parent.key, child])
        expect((await call(b, "/v1/chat/completions", key, chat("before"))).status).toBe(200);
      const revoked = await fetch(`${a.url}/v1/admin/keys/${parent.keyId}/revoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${cluster.adminKey}` },
      });
      expect(revoked.status).toBe(200);
      const started = Date.now();
      for (const key of [parent.key, child]) {
        await expect
          .poll(async () => (await call(b, "/v1/chat/completions", key, chat("after"))).status, {
            timeout: 1_000,
            interval: 50,
          })
          .toBe(401);
      }
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it("reloads every instance within a second when one is told to (SIGHUP)", async () => {
      const { key } = await user({});
      const aliased = { ...chat("alias"), model: "house-model" };
      expect((await call(b, "/v1/chat/completions", key, aliased)).status).toBe(404);
      cluster.writeConfig(`${CONFIG}model_aliases:\n  house-model: gpt-4o-mini\n`);
      a.child.kill("SIGHUP");
      const started = Date.now();
      await expect
        .poll(async () => (await call(b, "/v1/chat/completions", key, aliased)).status, {
          timeout: 1_000,
          interval: 50,
        })
        .toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      cluster.writeConfig(CONFIG);
      a.child.kill("SIGHUP");
      await expect
        .poll(async () => (await call(b, "/v1/chat/completions", key, aliased)).status)
        .toBe(404);
    });

    it("survives a Redis restart under load as on_unavailable: open says, and enforces again after", async () => {
      const { key } = await user({ rpm: 1000 });
      let stop = false;
      const statuses: number[] = [];
      const load = (async () => {
        for (let i = 0; !stop; i++)
          statuses.push(
            (await call(i % 2 ? a : b, "/v1/chat/completions", key, chat("load"))).status,
          );
      })();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await cluster.redis.stop();
      await new Promise((resolve) => setTimeout(resolve, 800));
      const restarted = await (await import("./support/cluster.ts")).startRedisServer(
        cluster.redis.port,
      );
      cluster.redis = restarted;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      stop = true;
      await load;
      // Open: every request was served, with Redis or without it.
      expect(statuses.length).toBeGreaterThan(10);
      expect(new Set(statuses)).toEqual(new Set([200]));
      // And the quotas are back: a fresh rpm budget is enforced again on both.
      const limited = await user({ rpm: 2 });
      const after = await Promise.all(
        [a, b, a, b].map((gateway) =>
          call(gateway, "/v1/chat/completions", limited.key, chat("x")),
        ),
      );
      expect(after.map((result) => result.status).sort()).toEqual([200, 200, 429, 429]);
    });

    it("frees a killed instance's slots within the lease time, and settles its holds, after random aborts", async () => {
      const { key, keyId } = await user({ concurrency: 5 });
      const aborts = Array.from({ length: 5 }, () => new AbortController());
      const pending = aborts.map((abort, i) =>
        call(
          i < 3 ? b : a,
          "/v1/chat/completions",
          key,
          chat(`[[sandbox:delay=20000]] long ${i}`),
          abort.signal,
        ).catch(() => undefined),
      );
      await expect.poll(() => inFlight(keyId), { timeout: 5_000 }).toBe(5);
      aborts[3]!.abort();
      b.child.kill("SIGKILL");
      await b.exited;
      aborts[4]!.abort();
      for (const abort of aborts) abort.abort();
      await Promise.all(pending);
      // lease_ttl_seconds is 3 here: the dead instance's three slots expire by then.
      await expect.poll(() => inFlight(keyId), { timeout: 6_000, interval: 200 }).toBe(0);
      // And its held requests are settled by the survivor once its heartbeat is 5 s old.
      await expect
        .poll(async () => (await call(a, "/v1/account/balance", key)).body.held_micros, {
          timeout: 15_000,
          interval: 250,
        })
        .toBe(0);
      const again = await Promise.all(
        Array.from({ length: 5 }, () =>
          call(a, "/v1/chat/completions", key, chat("[[sandbox:delay=300]] x")),
        ),
      );
      expect(again.map((result) => result.status)).toEqual([200, 200, 200, 200, 200]);
      b = await cluster.addGateway();
    });

    it("finalizes, bills and announces each of 20 video tasks once, the survivor finishing a killed instance's", async () => {
      const deliveries: string[] = [];
      const hooks: Server = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        request.on("end", () => {
          deliveries.push((JSON.parse(body) as { id: string }).id);
          response.end("ok");
        });
      });
      await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
      const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
      const { key, accountId } = await user({});
      const tasks = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const created = await call(i % 2 ? a : b, "/v1/videos/generations", key, {
            model: "gen-video",
            prompt: `clip ${i} [[sandbox:video-seconds=2]]`,
            duration: 2,
            webhook_url: hookUrl,
          });
          expect(created.status).toBe(202);
          return created.body.id as string;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      b.child.kill("SIGKILL");
      await b.exited;
      await expect
        .poll(
          async () => {
            const states = await Promise.all(
              tasks.map(
                async (id) =>
                  (
                    (await call(a, `/v1/videos/generations/${id}`, key)).body.billing as {
                      state: string;
                    }
                  ).state,
              ),
            );
            return states.filter((state) => state === "settled").length;
          },
          { timeout: 40_000, interval: 250 },
        )
        .toBe(20);
      await expect.poll(() => new Set(deliveries).size, { timeout: 10_000 }).toBe(20);
      await new Promise((resolve) => setTimeout(resolve, 500));
      hooks.close();
      expect(deliveries.length).toBe(20);
      const db = new pg.Client({ connectionString: cluster.databaseUrl });
      await db.connect();
      const charges = await db.query(
        "SELECT request_id, count(*) AS n FROM usage_records WHERE account_id = $1 GROUP BY request_id",
        [accountId],
      );
      await db.end();
      expect(charges.rows).toHaveLength(20);
      for (const row of charges.rows) expect(Number(row.n)).toBe(1);
      const verify = spawnSync(process.execPath, [CLI, "ledger", "verify"], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: cluster.databaseUrl },
        encoding: "utf8",
      });
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    });
  },
);
