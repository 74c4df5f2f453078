/**
 * @module ops/change-feed
 * How a change made through one instance reaches the others within a second: key revocations
 * and updates (the cached key lookups of a whole key tree) and configuration reloads.
 * - With Redis (`REDIS_URL`): published on a pub/sub channel. After a reconnection the feed
 *   says so (`resync`), since what was published meanwhile is lost, and the receiver drops
 *   every cached key. An event this instance could not publish is sent again once its Redis
 *   link is back (a resync, when many are waiting). While the subscription is down the feed is not `live`, and the key
 *   cache falls back to polling (`liveCacheTtlMs`).
 * - Without Redis, on a database that several instances share: nothing is published; keys are
 *   looked up again every second (the cache lives a second), and the configuration file is
 *   polled for changes every second (`watchConfigFile`).
 * Balance changes need nothing: admission reads the balance and open holds from the database
 * on every request.
 */
import { statSync } from "node:fs";
import type { RedisConnection } from "../store/index.ts";

export type ChangeEvent =
  /** Cached lookups of these keys (by hash) are stale: revoked, expired or changed. */
  | { type: "keys"; hashes: string[] }
  /** The configuration and catalog were reloaded: reload them here too. */
  | { type: "reload" }
  /** Events may have been missed: drop what depends on them. */
  | { type: "resync" };

export interface ChangeFeed {
  /** Sends an event to the other instances (never back to this one). */
  publish(event: Exclude<ChangeEvent, { type: "resync" }>): void;
  /** True while events from the other instances arrive. */
  readonly live: boolean;
}

const CHANNEL = "changes";
/** How long a cached key is trusted when changes may not be heard of. */
export const POLLED_CACHE_TTL_MS = 1_000;

/** The change feed over Redis pub/sub; `onEvent` receives the other instances' events. */
export async function redisChangeFeed(
  redis: RedisConnection,
  options: {
    instanceId: string;
    onEvent: (event: ChangeEvent) => void;
    logger: { warn(fields: Record<string, unknown>, message: string): void };
  },
): Promise<ChangeFeed> {
  await redis.subscribe(
    CHANNEL,
    (message) => {
      let parsed: { from?: unknown; event?: ChangeEvent };
      try {
        parsed = JSON.parse(message) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.from !== options.instanceId && parsed.event) options.onEvent(parsed.event);
    },
    () => options.onEvent({ type: "resync" }),
  );
  // Events that could not be published (this instance's Redis link down while the others'
  // is up, so they would trust their caches for the whole lifetime) are sent again as soon as
  // the link is back; past a bound, one resync stands for all of them.
  let unsent: ChangeEvent[] = [];
  const send = (event: ChangeEvent) => {
    redis.publish(CHANNEL, JSON.stringify({ from: options.instanceId, event })).catch((error) => {
      options.logger.warn(
        { err: error instanceof Error ? error.message : String(error), event: event.type },
        "could not publish a change to the other instances (sent again when Redis is back)",
      );
      unsent =
        unsent.length >= MAX_UNSENT || unsent[0]?.type === "resync"
          ? [{ type: "resync" }]
          : [...unsent, event];
    });
  };
  redis.whenReady(() => {
    const due = unsent;
    unsent = [];
    for (const event of due) send(event);
  });
  return {
    get live() {
      return redis.ready;
    },
    publish: send,
  };
}

/** How many unpublished events are kept before one resync replaces them. */
const MAX_UNSENT = 100;

/** A feed for a single instance, or several without Redis: nothing is sent, nothing heard. */
export function silentChangeFeed(): ChangeFeed {
  return { live: false, publish: () => {} };
}

/**
 * Calls `onChange` when the file at `path` changes (checked every `intervalMs`); returns the
 * stop function. A file that cannot be read is skipped until it can.
 */
export function watchConfigFile(path: string, onChange: () => void, intervalMs = 1_000) {
  const stamp = () => {
    try {
      const stats = statSync(path);
      return `${stats.mtimeMs}:${stats.size}`;
    } catch {
      return undefined;
    }
  };
  let last = stamp();
  const timer = setInterval(() => {
    const next = stamp();
    if (next === undefined || next === last) return;
    last = next;
    onChange();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * What an instance does with another instance's event: drops the keys from `authenticator`'s
 * cache (the local one, never the publishing wrapper, or the event would be sent on again),
 * drops every cached key after a resync, or reloads.
 */
export function applyChange(target: {
  authenticator: { invalidate(keyHash: string): void; invalidateAll(): void };
  reload(): void;
}): (event: ChangeEvent) => void {
  return (event) => {
    if (event.type === "keys")
      for (const hash of event.hashes) target.authenticator.invalidate(hash);
    else if (event.type === "resync") target.authenticator.invalidateAll();
    else target.reload();
  };
}

/**
 * `authenticator` whose invalidations are also published (batched per tick), so the other
 * instances drop the same cached keys.
 */
export function publishingInvalidations<T extends { invalidate(keyHash: string): void }>(
  authenticator: T,
  feed: () => ChangeFeed,
): T {
  const pending = new Set<string>();
  const flush = () => {
    if (pending.size === 0) return;
    feed().publish({ type: "keys", hashes: [...pending] });
    pending.clear();
  };
  return Object.assign(Object.create(authenticator) as T, {
    invalidate(keyHash: string) {
      authenticator.invalidate(keyHash);
      if (pending.size === 0) queueMicrotask(flush);
      pending.add(keyHash);
    },
  });
}
