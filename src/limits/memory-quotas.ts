/**
 * @module limits/memory-quotas
 * In-memory rate and concurrency quotas for a single instance (the embedded default).
 * - Requests per minute: a sliding one-minute window of admission times per key, so exactly
 *   `rpm` requests pass in any 60 seconds.
 * - Concurrency: leases with an expiry, not bare counters. A lease is released when its request
 *   ends; one that is never released (a bug, a crash of the handler) expires by itself, so a
 *   slot can never leak for good.
 * A key minted by a key (`key.ancestors`) is admitted only when its own budget and every
 * ancestor's have room, and then counts against all of them: a parent's limits bound its whole
 * subtree. A key with no parent checks one budget, as before.
 */
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { QuotaDefaults, QuotaLease, QuotaLimiter } from "./quota-limiter.ts";

export interface MemoryQuotaOptions extends QuotaDefaults {
  now?: () => number;
}

const WINDOW_MS = 60_000;
const NO_ANCESTORS: readonly ApiKeyRecord[] = [];

/**
 * Admission times of one key, oldest first. Expired times are dropped by moving `head`, not by
 * `Array.prototype.shift` (which copies the whole array once it is large: at a high `rpm` limit
 * the window holds one entry per request of the last minute).
 */
class AdmissionWindow {
  #times: number[] = [];
  #head = 0;

  get size(): number {
    return this.#times.length - this.#head;
  }

  get oldest(): number | undefined {
    return this.#times[this.#head];
  }

  dropUpTo(time: number): void {
    while (this.#head < this.#times.length && this.#times[this.#head]! <= time) this.#head += 1;
    if (this.#head > 1024 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }

  push(time: number): void {
    this.#times.push(time);
  }
}

export interface QuotaSnapshot {
  /** Open concurrency leases per key id. */
  inFlight(keyId: string): number;
}

export function createMemoryQuotas(
  initial: MemoryQuotaOptions,
): QuotaLimiter & QuotaSnapshot & Required<Pick<QuotaLimiter, "configure">> {
  const now = initial.now ?? Date.now;
  let options: QuotaDefaults = { ...initial };
  const admissions = new Map<string, AdmissionWindow>();
  const leases = new Map<string, Map<number, number>>();
  let nextLeaseId = 0;

  function openLeases(keyId: string, time: number): Map<number, number> {
    let open = leases.get(keyId);
    if (!open) {
      open = new Map();
      leases.set(keyId, open);
    }
    for (const [id, expiresAt] of open) if (expiresAt <= time) open.delete(id);
    return open;
  }

  return {
    configure(defaults) {
      options = { ...defaults };
    },
    inFlight(keyId) {
      return openLeases(keyId, now()).size;
    },
    async acquire(key: ApiKeyRecord) {
      const time = now();
      const headers: Record<string, string> = {};
      // The key's own budget, then each ancestor's: a minted key spends its parents' budgets too.
      const ancestors = key.ancestors ?? NO_ANCESTORS;
      const chain = ancestors.length === 0 ? [key] : [key, ...ancestors];
      const windows: Array<AdmissionWindow | undefined> = [];
      let tightest: { rpm: number; remaining: number; resetMs: number } | undefined;
      for (const holder of chain) {
        const rpm = holder.rpm ?? options.defaultRpm;
        if (rpm === null) {
          windows.push(undefined);
          continue;
        }
        const window = admissions.get(holder.id) ?? new AdmissionWindow();
        window.dropUpTo(time - WINDOW_MS);
        const oldest = window.oldest;
        const resetMs = oldest === undefined ? 0 : oldest + WINDOW_MS - time;
        if (window.size >= rpm) {
          const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
          throw new GatewayError(
            "rate_limited",
            {},
            {
              headers: {
                "retry-after": String(retryAfter),
                "x-ratelimit-limit-requests": String(rpm),
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": `${retryAfter}s`,
              },
            },
          );
        }
        windows.push(window);
        const remaining = rpm - window.size - 1;
        if (!tightest || remaining < tightest.remaining) {
          tightest = { rpm, remaining, resetMs: oldest === undefined ? WINDOW_MS : resetMs };
        }
      }
      if (tightest) {
        headers["x-ratelimit-limit-requests"] = String(tightest.rpm);
        headers["x-ratelimit-remaining-requests"] = String(tightest.remaining);
        headers["x-ratelimit-reset-requests"] =
          `${Math.max(1, Math.ceil(tightest.resetMs / 1000))}s`;
      }
      const leased: string[] = [];
      let tightestConcurrency: number | undefined;
      for (const holder of chain) {
        const concurrency = holder.concurrency ?? options.defaultConcurrency;
        if (concurrency === null) continue;
        if (openLeases(holder.id, time).size >= concurrency) {
          throw new GatewayError(
            "concurrency_limited",
            {},
            {
              headers: { "retry-after": "1", "x-ratelimit-limit-concurrency": String(concurrency) },
            },
          );
        }
        leased.push(holder.id);
        tightestConcurrency = Math.min(tightestConcurrency ?? concurrency, concurrency);
      }
      // Every budget has room: only now take a slot in each.
      const leaseId = leased.length > 0 ? nextLeaseId++ : undefined;
      if (leaseId !== undefined) {
        for (const id of leased) leases.get(id)?.set(leaseId, time + options.leaseTtlMs);
        headers["x-ratelimit-limit-concurrency"] = String(tightestConcurrency);
      }
      chain.forEach((holder, index) => {
        const window = windows[index];
        if (!window) return;
        window.push(time);
        admissions.set(holder.id, window);
      });
      let released = false;
      const lease: QuotaLease = {
        headers,
        release() {
          if (released || leaseId === undefined) return;
          released = true;
          for (const id of leased) leases.get(id)?.delete(leaseId);
        },
      };
      return lease;
    },
  };
}
