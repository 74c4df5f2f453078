/**
 * @module ops/open-redis
 * Connects to the Redis of `REDIS_URL` (`redis.url`), when set. One that cannot be reached is
 * logged and tried again in the background: the gateway starts anyway, and
 * `redis.on_unavailable` governs requests meanwhile. Losing and regaining the connection is
 * logged once each.
 */
import type { Logger } from "pino";
import type { Config } from "../config/index.ts";
import { connectRedis, type RedisConnection } from "../store/index.ts";

export async function openRedis(
  config: Config,
  logger: Logger,
): Promise<RedisConnection | undefined> {
  const url = config.redis.url;
  if (!url) return undefined;
  return connectRedis({
    url,
    prefix: config.redis.key_prefix,
    commandTimeoutMs: config.redis.command_timeout_ms,
    onStateChange: (up, error) =>
      up
        ? logger.info("Redis connection is up")
        : logger.error(
            { err: error?.message, policy: config.redis.on_unavailable },
            "Redis connection lost: reconnecting",
          ),
  });
}
