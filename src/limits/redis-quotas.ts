/**
 * @module limits/redis-quotas
 * Rate, token and concurrency quotas shared by every instance through Redis, with the same
 * rules as `memory-quotas.ts` (`quota-plan.ts`): a key and each ancestor checked, all or none
 * spent. One Lua script checks and spends every budget of a request atomically, on Redis's
 * clock (`TIME`), so instances with skewed clocks agree:
 * - `rpm`: a sorted set of admissions per key, scored by time (a sliding minute);
 * - `tpm`: a hash of tokens per second per key, summed over the last minute;
 * - concurrency: a sorted set of leases per key, scored by expiry. A lease lives
 *   {@link LEASE_SLICE_MS} at a time and is renewed while its request runs (up to
 *   `limits.lease_ttl_seconds`), so the slots of an instance that dies come back within
 *   seconds, and a long stream keeps its slot.
 * When Redis cannot be reached, `redis.on_unavailable` decides: `open` admits the request
 * unchecked (logged loudly, at most every few seconds), `closed` answers `503
 * quota_unavailable`. Either way nothing is retried: ioredis reconnects by itself.
 */
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord, RedisConnection } from "../store/index.ts";
import type { QuotaDefaults, QuotaLease, QuotaLimiter } from "./quota-limiter.ts";
import {
  admissionHeaders,
  type QuotaKind,
  quotaChain,
  quotaExceeded,
  WINDOW_MS,
} from "./quota-plan.ts";
import {
  ACQUIRE_SCRIPT,
  COUNT_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  SPEND_SCRIPT,
} from "./redis-scripts.ts";

/** How long a lease lives between renewals: a dead instance's slots are free after it. */
export const LEASE_SLICE_MS = 15_000;
/** The most often an unreachable Redis is logged. */
const WARN_EVERY_MS = 5_000;

export interface RedisQuotaOptions extends QuotaDefaults {
  redis: RedisConnection;
  onUnavailable: "open" | "closed";
  /** How long a lease lives between renewals; {@link LEASE_SLICE_MS} unless a test shortens it. */
  leaseSliceMs?: number;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  now?: () => number;
}

interface OpenLease {
  keys: string[];
  member: string;
  /** When the lease's whole life (`lease_ttl_seconds`) ends. */
  endsAt: number;
}

const KINDS: Record<number, QuotaKind> = { 1: "requests", 2: "concurrency", 3: "tokens" };

function numbers(reply: unknown): number[] {
  return Array.isArray(reply) ? reply.map((value) => Number(value)) : [];
}

export function createRedisQuotas(initial: RedisQuotaOptions): QuotaLimiter &
  Required<Pick<QuotaLimiter, "configure">> & {
    inFlight(keyId: string): Promise<number>;
    stop(): void;
  } {
  const { redis, logger } = initial;
  const slice = initial.leaseSliceMs ?? LEASE_SLICE_MS;
  const now = initial.now ?? Date.now;
  let defaults: QuotaDefaults = { ...initial };
  const open = new Map<string, OpenLease>();
  let sequence = 0;
  let lastWarning = 0;
  const key = (kind: string, id: string) => `${redis.prefix}quota:${kind}:${id}`;

  function unavailable(error: unknown): QuotaLease {
    const time = now();
    if (time - lastWarning >= WARN_EVERY_MS) {
      lastWarning = time;
      logger.warn(
        {
          err: error instanceof Error ? error.message : String(error),
          policy: initial.onUnavailable,
        },
        initial.onUnavailable === "open"
          ? "Redis is unreachable: quotas are NOT enforced until it is back"
          : "Redis is unreachable: model requests are refused until it is back",
      );
    }
    if (initial.onUnavailable === "closed")
      throw new GatewayError("quota_unavailable", {}, { headers: { "retry-after": "1" } });
    return { headers: {}, spend: () => {}, release: () => {} };
  }

  // Renews the leases of this instance's running requests; unref'd, so it never holds the
  // process open.
  const renewal = setInterval(() => {
    const time = now();
    for (const [id, lease] of open) {
      if (time >= lease.endsAt) {
        open.delete(id);
        continue;
      }
      redis
        .run(RENEW_SCRIPT, lease.keys, [
          lease.member,
          Math.min(LEASE_SLICE_MS, lease.endsAt - time),
        ])
        .catch(() => {});
    }
  }, slice / 3);
  renewal.unref();

  return {
    configure(next) {
      defaults = { ...next };
    },
    async inFlight(keyId) {
      return Number(await redis.run(COUNT_SCRIPT, [key("conc", keyId)], []));
    },
    stop() {
      clearInterval(renewal);
    },
    async acquire(apiKey: ApiKeyRecord, requestId: string) {
      const chain = quotaChain(apiKey, defaults);
      const limited = chain.filter(
        (holder) => holder.rpm !== null || holder.tpm !== null || holder.concurrency !== null,
      );
      if (limited.length === 0) return { headers: {}, spend: () => {}, release: () => {} };
      const member = `${requestId}:${(sequence++).toString(36)}`;
      const leaseMs = Math.min(slice, defaults.leaseTtlMs);
      const keys = limited.flatMap((holder) => [
        key("rpm", holder.id),
        key("conc", holder.id),
        key("tpm", holder.id),
      ]);
      const args = [
        member,
        leaseMs,
        WINDOW_MS,
        limited.length,
        ...limited.flatMap((holder) => [
          holder.rpm ?? -1,
          holder.concurrency ?? -1,
          holder.tpm ?? -1,
        ]),
      ];
      let reply: number[];
      try {
        reply = numbers(await redis.run(ACQUIRE_SCRIPT, keys, args));
      } catch (error) {
        return unavailable(error);
      }
      const [verdict = 0, limit = 0, resetMs = 0, index = 0] = reply;
      const refused = KINDS[verdict];
      if (refused) throw quotaExceeded(refused, limit, resetMs, limited[index] ?? limited[0]!);
      // 0, then the tightest rpm (limit, remaining, reset), tpm (same) and concurrency (-1: none).
      const [
        ,
        rpm = -1,
        rpmLeft = 0,
        rpmReset = 0,
        tpm = -1,
        tpmLeft = 0,
        tpmReset = 0,
        conc = -1,
      ] = reply;
      const concKeys = limited.filter((holder) => holder.concurrency !== null);
      const tpmKeys = limited.filter((holder) => holder.tpm !== null);
      if (concKeys.length > 0)
        open.set(member, {
          keys: concKeys.map((holder) => key("conc", holder.id)),
          member,
          endsAt: now() + defaults.leaseTtlMs,
        });
      let released = false;
      let spent = false;
      return {
        headers: admissionHeaders({
          requests: rpm >= 0 ? { limit: rpm, remaining: rpmLeft, resetMs: rpmReset } : undefined,
          tokens: tpm >= 0 ? { limit: tpm, remaining: tpmLeft, resetMs: tpmReset } : undefined,
          concurrency: conc >= 0 ? conc : undefined,
        }),
        spend(tokens) {
          if (spent || tokens <= 0 || tpmKeys.length === 0) return;
          spent = true;
          const tpmKeyNames = tpmKeys.map((holder) => key("tpm", holder.id));
          redis.run(SPEND_SCRIPT, tpmKeyNames, [Math.round(tokens), WINDOW_MS]).catch(() => {});
        },
        release() {
          if (released || concKeys.length === 0) return;
          released = true;
          const lease = open.get(member);
          open.delete(member);
          // A release that fails (Redis away) is made good by the lease's expiry. One connection
          // carries renewals and releases in order, so no renewal sent earlier outlives it.
          if (lease) redis.run(RELEASE_SCRIPT, lease.keys, [member]).catch(() => {});
        },
      };
    },
  };
}
