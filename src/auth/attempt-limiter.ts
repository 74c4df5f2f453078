/**
 * @module auth/attempt-limiter
 * Limits on login, registration and credit code attempts, per client address and per email (an
 * account id for redemptions), kept in memory
 * for one instance. Each limit is a token bucket: `limit` attempts at once, refilled at `limit`
 * per window, so a client that keeps within the rate is never refused and a burst beyond it is
 * refused until tokens come back (`Retry-After` says when).
 *
 * Memory is bounded: at most `maxEntries` buckets. Buckets are kept in least-recently-used
 * order; a bucket untouched for a whole window is full again, the same as no bucket at all, so
 * such buckets are dropped as they are met, and when the table is full the least recently used
 * bucket goes. An attacker cycling addresses or emails therefore cannot grow it.
 */
import { GatewayError } from "../errors/index.ts";

/** `redeem`: credit code redemptions, counted per address and per account (in the email slot). */
export type AttemptAction = "login" | "register" | "redeem";

export interface AttemptLimit {
  /** Attempts allowed per window (and at once); null for no limit. */
  limit: number | null;
  windowMs: number;
}

export interface AttemptLimiterOptions {
  perAddress: Record<AttemptAction, AttemptLimit>;
  perEmail: Record<AttemptAction, AttemptLimit>;
  maxEntries: number;
  now?: () => number;
}

export interface AttemptLimiter {
  /**
   * Counts one attempt of `action` from `address` for `email`. When either limit is reached it
   * counts nothing and throws `429 too_many_attempts` with `Retry-After`.
   */
  attempt(action: AttemptAction, address: string, email: string): void;
  /** Buckets held now (for tests and metrics). */
  size(): number;
}

interface Bucket {
  tokens: number;
  at: number;
  windowMs: number;
}

/** How many least-recently-used buckets one attempt looks at for dropping. */
const SWEEP = 4;

/**
 * The part of a client address that identifies one client: IPv4 (also IPv4-mapped IPv6) as is,
 * IPv6 by its /64 prefix, the block one host is usually given.
 */
export function clientKey(address: string): string {
  const plain = address.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1] as string;
  if (!plain.includes(":")) return plain;
  const [head = "", tail, extra] = plain.split("::");
  if (extra !== undefined) return plain;
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  if (groups.length !== 8 || !groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return plain;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

export function createAttemptLimiter(options: AttemptLimiterOptions): AttemptLimiter {
  const now = options.now ?? Date.now;
  const buckets = new Map<string, Bucket>();

  /** Tokens in `bucket` at `time`; a bucket never refills past its limit. */
  function tokensAt(bucket: Bucket | undefined, limit: number, time: number): number {
    if (!bucket) return limit;
    const elapsed = Math.max(0, time - bucket.at);
    return Math.min(limit, bucket.tokens + (elapsed * limit) / bucket.windowMs);
  }

  function sweep(time: number): void {
    let looked = 0;
    for (const [key, bucket] of buckets) {
      if (looked++ >= SWEEP) break;
      if (time - bucket.at >= bucket.windowMs) buckets.delete(key);
    }
    // Still full: the least recently used bucket goes.
    while (buckets.size >= options.maxEntries) {
      const oldest = buckets.keys().next();
      if (oldest.done) break;
      buckets.delete(oldest.value);
    }
  }

  return {
    attempt(action, address, email) {
      const time = now();
      const checks = [
        { key: `${action} address ${clientKey(address)}`, ...options.perAddress[action] },
        { key: `${action} email ${email.toLowerCase()}`, ...options.perEmail[action] },
      ];
      let waitMs = 0;
      const next: Array<[string, Bucket]> = [];
      for (const { key, limit, windowMs } of checks) {
        if (limit === null) continue;
        const tokens = tokensAt(buckets.get(key), limit, time);
        if (tokens < 1) waitMs = Math.max(waitMs, ((1 - tokens) * windowMs) / limit);
        else next.push([key, { tokens: tokens - 1, at: time, windowMs }]);
      }
      if (waitMs > 0) {
        const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
        throw new GatewayError(
          "too_many_attempts",
          { action, retryAfter },
          { headers: { "retry-after": String(retryAfter) } },
        );
      }
      for (const [key, bucket] of next) {
        // Re-inserted at the end: the map stays in least-recently-used order.
        buckets.delete(key);
        sweep(time);
        buckets.set(key, bucket);
      }
    },
    size: () => buckets.size,
  };
}
