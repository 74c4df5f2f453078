/**
 * The Redis quotas against the real local Redis, with two limiters standing for two gateway
 * instances: budgets hold across both, a dead instance's leases come back, tokens count against
 * `tpm`, a key tree's budgets are shared, and an unreachable Redis follows `on_unavailable`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTestRedis, redisReachable } from "../../test/support/redis.ts";
import { GatewayError } from "../errors/index.ts";
import { type ApiKeyRecord, connectRedis, type RedisConnection } from "../store/index.ts";
import { createRedisQuotas, type RedisQuotaOptions } from "./redis-quotas.ts";

const available = await redisReachable();

function apiKey(id: string, limits: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id, rpm: null, tpm: null, concurrency: null, ...limits } as ApiKeyRecord;
}

const silent = { warn: () => {} };

describe.skipIf(!available)("Redis quotas shared by two instances", () => {
  let redis: RedisConnection;
  const limiters: Array<ReturnType<typeof createRedisQuotas>> = [];
  const limiter = (options: Partial<RedisQuotaOptions> = {}) => {
    const created = createRedisQuotas({
      redis,
      defaultRpm: null,
      defaultConcurrency: null,
      leaseTtlMs: 60_000,
      onUnavailable: "open",
      logger: silent,
      ...options,
    });
    limiters.push(created);
    return created;
  };

  beforeAll(async () => {
    redis = await connectTestRedis();
  });
  afterAll(async () => {
    for (const each of limiters) each.stop();
    await redis.close();
  });

  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      () => "ok",
      (error: unknown) => (GatewayError.isInstance(error) ? error.code : "other"),
    );

  it("admits exactly rpm requests in the window across both, concurrently", async () => {
    const [a, b] = [limiter(), limiter()];
    const key = apiKey("key_rpm", { rpm: 60 });
    const results = await Promise.all(
      Array.from({ length: 90 }, (_, i) => outcome((i % 2 ? a : b).acquire(key, `r${i}`))),
    );
    expect(results.filter((result) => result === "ok")).toHaveLength(60);
    expect(results.filter((result) => result === "rate_limited")).toHaveLength(30);
  });

  it("never has more than the concurrency limit in flight across both", async () => {
    const [a, b] = [limiter(), limiter()];
    const key = apiKey("key_conc", { concurrency: 5 });
    let inFlight = 0;
    let most = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 3));
        try {
          const lease = await (i % 2 ? a : b).acquire(key, `c${i}`);
          inFlight += 1;
          most = Math.max(most, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inFlight -= 1;
          lease.release();
        } catch (error) {
          expect(GatewayError.isInstance(error) && error.code).toBe("concurrency_limited");
          refused += 1;
        }
      }),
    );
    expect(most).toBeLessThanOrEqual(5);
    expect(most).toBeGreaterThan(1);
    expect(refused).toBeGreaterThan(0);
    await expect.poll(() => a.inFlight(key.id)).toBe(0);
  });

  it("gets back the slots of an instance that died holding them, after the lease time", async () => {
    const dying = limiter({ leaseTtlMs: 1_000 });
    const survivor = limiter({ leaseTtlMs: 1_000 });
    const key = apiKey("key_dead", { concurrency: 2 });
    await dying.acquire(key, "d1");
    await dying.acquire(key, "d2");
    dying.stop(); // never releases, never renews: as if the process were killed
    await expect(outcome(survivor.acquire(key, "s1"))).resolves.toBe("concurrency_limited");
    await expect.poll(() => survivor.inFlight(key.id), { timeout: 5_000 }).toBe(0);
    await expect(outcome(survivor.acquire(key, "s2"))).resolves.toBe("ok");
  });

  it("keeps a long request's slot by renewing it, and frees it on release", async () => {
    const quotas = limiter({ leaseTtlMs: 60_000, leaseSliceMs: 600 });
    const other = limiter({ leaseTtlMs: 60_000, leaseSliceMs: 600 });
    const key = apiKey("key_long", { concurrency: 1 });
    const lease = await quotas.acquire(key, "long");
    // Three slices later the lease is still held: it was renewed, not left to expire.
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    expect(await other.inFlight(key.id)).toBe(1);
    await expect(outcome(other.acquire(key, "other"))).resolves.toBe("concurrency_limited");
    lease.release();
    await expect.poll(() => other.inFlight(key.id)).toBe(0);
    await expect(outcome(other.acquire(key, "other"))).resolves.toBe("ok");
  });

  it("counts settled tokens against tpm on every instance", async () => {
    const [a, b] = [limiter(), limiter()];
    const key = apiKey("key_tpm", { tpm: 1_000 });
    const first = await a.acquire(key, "t1");
    expect(first.headers["x-ratelimit-limit-tokens"]).toBe("1000");
    expect(first.headers["x-ratelimit-remaining-tokens"]).toBe("1000");
    first.spend(600);
    await expect
      .poll(async () => (await b.acquire(key, "t2")).headers["x-ratelimit-remaining-tokens"])
      .toBe("400");
    (await b.acquire(key, "t3")).spend(500);
    await expect.poll(() => outcome(a.acquire(key, "t4"))).toBe("token_rate_limited");
    const refused = await b.acquire(key, "t5").catch((error: unknown) => error as GatewayError);
    expect((refused as GatewayError).headers["x-ratelimit-remaining-tokens"]).toBe("0");
    expect(Number((refused as GatewayError).headers["retry-after"])).toBeGreaterThan(0);
  });

  it("spends a minted key's parent budget too, from either instance", async () => {
    const [a, b] = [limiter(), limiter()];
    const parent = apiKey("key_parent", { rpm: 3 });
    const child = apiKey("key_child", { rpm: 10, ancestors: [parent] } as Partial<ApiKeyRecord>);
    const sibling = apiKey("key_sibling", { ancestors: [parent] } as Partial<ApiKeyRecord>);
    await a.acquire(child, "k1");
    await b.acquire(sibling, "k2");
    await a.acquire(parent, "k3");
    await expect(outcome(b.acquire(child, "k4"))).resolves.toBe("rate_limited");
    await expect(outcome(a.acquire(sibling, "k5"))).resolves.toBe("rate_limited");
  });
});

describe("Redis quotas while Redis cannot be reached", () => {
  let redis: RedisConnection;
  beforeAll(async () => {
    // Nothing listens there: every command fails at once.
    redis = await connectRedis({ url: "redis://127.0.0.1:1", prefix: "x:", commandTimeoutMs: 200 });
  });
  afterAll(() => redis.close());
  const key = apiKey("key_x", { rpm: 1, concurrency: 1 });

  it("admits unchecked and says so in the log when open", async () => {
    const warnings: string[] = [];
    const quotas = createRedisQuotas({
      redis,
      defaultRpm: null,
      defaultConcurrency: null,
      leaseTtlMs: 1000,
      onUnavailable: "open",
      logger: { warn: (_fields, message) => warnings.push(message) },
    });
    const leases = await Promise.all([1, 2, 3].map((n) => quotas.acquire(key, `o${n}`)));
    expect(leases.map((lease) => lease.headers)).toEqual([{}, {}, {}]);
    expect(warnings).toEqual([expect.stringMatching(/quotas are NOT enforced/)]);
    quotas.stop();
  });

  it("refuses with 503 quota_unavailable when closed", async () => {
    const quotas = createRedisQuotas({
      redis,
      defaultRpm: null,
      defaultConcurrency: null,
      leaseTtlMs: 1000,
      onUnavailable: "closed",
      logger: silent,
    });
    const error = await quotas.acquire(key, "c1").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "quota_unavailable", status: 503 });
    quotas.stop();
  });
});
