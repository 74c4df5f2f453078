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
 * A Redis that lost its data (a restart without persistence) lost the leases too: each
 * instance puts its own back as it reconnects, and until a renewal period has passed (a marker
 * key, set at start, is gone; or, set by an instance starting on a Redis server younger than
 * that period, counted from the server's start) concurrency checks count as Redis being
 * unavailable under `closed`.
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
  MARK_SCRIPT,
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
  const marker = `${redis.prefix}quota:restart-marker`;
  // After Redis lost its data, concurrency checks wait this long under `closed` (every instance
  // puts its leases back as it reconnects, and a periodic renewal comes round within a third of
  // a slice). Under `open` they go on at once with the leases put back so far: the policy
  // prefers admitting to refusing when unsure.
  const warmupMs = initial.onUnavailable === "closed" ? Math.ceil(slice / 3) + 1_000 : 0;

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

  // Renews the leases of this instance's running requests (putting back any Redis lost).
  const renewAll = () => {
    const time = now();
    for (const [id, lease] of open) {
      if (time >= lease.endsAt) {
        open.delete(id);
        continue;
      }
      redis
        .run(RENEW_SCRIPT, lease.keys, [lease.member, Math.min(slice, lease.endsAt - time)])
        .catch(() => {});
    }
  };
  // Periodically, unref'd so it never holds the process open; and first thing on every
  // reconnection, since the server may be a restarted one that lost every lease.
  const renewal = setInterval(renewAll, slice / 3);
  renewal.unref();
  // The marker, set once by this process's first connection, says that Redis still holds what
  // it held since: gone later, Redis lost its data (and the leases with it).
  let marked = false;
  const mark = () =>
    redis.run(MARK_SCRIPT, [marker], [warmupMs]).then(
      () => {
        marked = true;
      },
      () => {},
    );
  mark();
  redis.whenReady(() => {
    if (!marked) mark();
    renewAll();
  });

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
        warmupMs,
      ];
      let reply: number[];
      try {
        reply = numbers(await redis.run(ACQUIRE_SCRIPT, [...keys, marker], args));
      } catch (error) {
        // A script that timed out may still run once Redis catches up, admitting a request that
        // was refused here: its admission and lease are taken back by a release sent on the same
        // connection, which Redis runs after it.
        const sets = keys.filter((_, index) => index % 3 !== 2); // rpm and lease sets
        redis.run(RELEASE_SCRIPT, sets, [member]).catch(() => {});
        return unavailable(error);
      }
      const [verdict = 0, limit = 0, resetMs = 0, index = 0] = reply;
      if (verdict === 4)
        return unavailable(
          new Error(`Redis lost its data; concurrency leases are being restored (${resetMs} ms)`),
        );
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
