/**
 * @module store/redis
 * The Redis connection named by `REDIS_URL` (`redis.url`), for what instances share: quota
 * counters and leases (`limits/redis-quotas.ts`) and change notifications (`ops/change-feed.ts`).
 * ioredis reconnects by itself with backoff; commands never queue while it is away (they fail
 * at once, and the caller applies `redis.on_unavailable`), and each one has a timeout, so a
 * Redis that hangs cannot hang requests. A second connection carries the subscriptions (Redis
 * reserves a subscribed connection for them).
 */
import { createHash } from "node:crypto";
import { Redis } from "ioredis";

/** A Lua script, and the name a connection knows it by (sent with `EVAL` once, then `EVALSHA`). */
export interface RedisScript {
  name: string;
  lua: string;
}

/** What the rest of the gateway uses of Redis. */
export interface RedisConnection {
  /** Runs a script atomically; rejects when Redis is unreachable or slower than the timeout. */
  run(script: RedisScript, keys: string[], args: Array<string | number>): Promise<unknown>;
  publish(channel: string, message: string): Promise<void>;
  /**
   * Calls `onMessage` for every message on `channel`; `onResubscribed` after a reconnection
   * (messages sent meanwhile were missed).
   */
  subscribe(
    channel: string,
    onMessage: (message: string) => void,
    onResubscribed: () => void,
  ): Promise<void>;
  /**
   * Calls `listener` each time the command connection is (re)established, before any command
   * sent after it: what Redis lost in a restart can be put back first.
   */
  whenReady(listener: () => void): void;
  /** True while both connections are up. */
  readonly ready: boolean;
  /** Prefix of every key and channel (`redis.key_prefix`). */
  readonly prefix: string;
  close(): Promise<void>;
}

export interface RedisOptions {
  url: string;
  prefix: string;
  commandTimeoutMs: number;
  /** Told when the connection goes down (once per outage) and when it is back. */
  onStateChange?: (up: boolean, error?: Error) => void;
}

const shas = new Map<string, string>();

/** The SHA-1 a server knows `script` by once it has run it. */
function shaOf(script: RedisScript): string {
  let sha = shas.get(script.lua);
  if (sha === undefined) {
    sha = createHash("sha1").update(script.lua).digest("hex");
    shas.set(script.lua, sha);
  }
  return sha;
}

function client(url: string, commandTimeoutMs: number): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(1000, commandTimeoutMs * 4),
    // Reconnect forever, quickly at first, then every two seconds.
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
  });
}

/**
 * Connects; a Redis that cannot be reached now is reported through `onStateChange` and tried
 * again in the background (`ready` says when it is up).
 */
export async function connectRedis(options: RedisOptions): Promise<RedisConnection> {
  const commands = client(options.url, options.commandTimeoutMs);
  const subscriber = client(options.url, options.commandTimeoutMs);
  let up = false;
  commands.on("ready", () => {
    if (!up) options.onStateChange?.(true);
    up = true;
  });
  commands.on("error", (error: Error) => {
    if (up) options.onStateChange?.(false, error);
    up = false;
  });
  commands.on("end", () => {
    up = false;
  });
  subscriber.on("error", () => {});
  // A Redis that is not up yet is not fatal: both connections keep trying in the background.
  await Promise.all([
    commands.connect().catch((error: Error) => options.onStateChange?.(false, error)),
    subscriber.connect().catch(() => {}),
  ]);
  // The scripts sent on this connection since it last connected. A script's first call is an
  // EVAL (which also caches it on the server) and later ones an EVALSHA: one command each, never
  // a SCRIPT LOAD round trip first, so calls reach the server in the order they were made (a
  // lease's release sent after its renewal, or before the client's next request, is never
  // overtaken by a call whose script was already loaded).
  const sent = new Set<string>();
  const readyListeners: Array<() => void> = [];
  commands.on("ready", () => {
    sent.clear();
    for (const listener of readyListeners) listener();
  });

  return {
    get ready() {
      return commands.status === "ready" && subscriber.status === "ready";
    },
    prefix: options.prefix,
    async run(script, keys, args) {
      if (!sent.has(script.name)) {
        sent.add(script.name);
        return commands.eval(script.lua, keys.length, ...keys, ...args);
      }
      try {
        return await commands.evalsha(shaOf(script), keys.length, ...keys, ...args);
      } catch (error) {
        // The server forgot its script cache without a reconnection (SCRIPT FLUSH): send it again.
        if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
        return commands.eval(script.lua, keys.length, ...keys, ...args);
      }
    },
    whenReady(listener) {
      readyListeners.push(listener);
    },
    async publish(channel, message) {
      await commands.publish(options.prefix + channel, message);
    },
    async subscribe(channel, onMessage, onResubscribed) {
      const name = options.prefix + channel;
      subscriber.on("message", (from: string, message: string) => {
        if (from === name) onMessage(message);
      });
      // Every (re)connection subscribes again; what was published while down is lost, so the
      // caller is told to resynchronise.
      subscriber.on("ready", () => {
        subscriber.subscribe(name).then(onResubscribed, () => {});
      });
      if (subscriber.status === "ready") await subscriber.subscribe(name);
    },
    async close() {
      commands.disconnect();
      subscriber.disconnect();
    },
  };
}
