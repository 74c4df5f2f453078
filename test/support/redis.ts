/**
 * @module test/support/redis
 * The local Redis the scale-out tests use when it answers (127.0.0.1:6379, or
 * `TEST_REDIS_URL`); tests that need it are skipped otherwise. Each test run uses its own key
 * prefix, so runs never see each other's counters.
 */
import { connectRedis, type RedisConnection, randomBase62 } from "../../src/store/index.ts";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export async function redisReachable(): Promise<boolean> {
  const redis = await connectRedis({ url: REDIS_URL, prefix: "probe:", commandTimeoutMs: 500 });
  const ready = redis.ready;
  await redis.close();
  return ready;
}

/** A fresh key prefix for one test file's run. */
export function testPrefix(): string {
  return `switchyard-test:${randomBase62(10)}:`;
}

export async function connectTestRedis(prefix = testPrefix()): Promise<RedisConnection> {
  return connectRedis({ url: REDIS_URL, prefix, commandTimeoutMs: 1000 });
}
