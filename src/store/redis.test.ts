/**
 * The Redis connection's scripts against the real local Redis (skipped when none answers): calls
 * reach the server in the order they are made, a script's first call on the connection included
 * (a lease's release must never be overtaken by the client's next acquisition).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTestRedis, redisReachable } from "../../test/support/redis.ts";
import type { RedisConnection, RedisScript } from "./redis.ts";

const available = await redisReachable();

describe.skipIf(!available)("Redis scripts", () => {
  let redis: RedisConnection;
  beforeAll(async () => {
    redis = await connectTestRedis();
  });
  afterAll(async () => {
    await redis.close();
  });

  const read: RedisScript = { name: "read", lua: "return redis.call('GET', KEYS[1])" };
  const write: RedisScript = {
    name: "write",
    lua: "return redis.call('SET', KEYS[1], ARGV[1])",
  };
  const append: RedisScript = {
    name: "append",
    lua: "return redis.call('APPEND', KEYS[1], ARGV[1])",
  };

  it("runs calls in the order they are made, a script's first call included", async () => {
    const key = `${redis.prefix}order`;
    expect(await redis.run(read, [key], [])).toBeNull();
    // `write` is new to the connection, `read` is not: the read must still see the write.
    const written = redis.run(write, [key], ["first"]);
    const seen = redis.run(read, [key], []);
    expect(await Promise.all([written, seen])).toEqual(["OK", "first"]);
  });

  it("keeps the order of many calls of several scripts started at once", async () => {
    const key = `${redis.prefix}many`;
    await redis.run(write, [key], [""]);
    const letters = Array.from({ length: 40 }, (_, i) => String.fromCharCode(97 + (i % 26)));
    await Promise.all(letters.map((letter) => redis.run(append, [key], [letter])));
    expect(await redis.run(read, [key], [])).toBe(letters.join(""));
  });
});
