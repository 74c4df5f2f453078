/**
 * @module limits/memory-quotas
 * In-memory rate, token and concurrency quotas for a single instance (the embedded default;
 * several instances share theirs in Redis, `redis-quotas.ts`).
 * - Requests per minute: a sliding one-minute window of admission times per key, so exactly
 *   `rpm` requests pass in any 60 seconds.
 * - Tokens per minute: the tokens of the requests settled in the last minute; a request is
 *   admitted while they are below `tpm` (its own size is not known before it runs).
 * - Concurrency: leases with an expiry, not bare counters. A lease is released when its request
 *   ends; one that is never released (a bug, a crash of the handler) expires by itself, so a
 *   slot can never leak for good.
 * A key minted by a key (`key.ancestors`) is admitted only when its own budget and every
 * ancestor's have room, and then counts against all of them (`quota-plan.ts`).
 */
import type { ApiKeyRecord } from "../store/index.ts";
import type { QuotaDefaults, QuotaLease, QuotaLimiter } from "./quota-limiter.ts";
import {
  admissionHeaders,
  type QuotaHolder,
  quotaChain,
  quotaExceeded,
  type Tightest,
  tighter,
  WINDOW_MS,
} from "./quota-plan.ts";

export interface MemoryQuotaOptions extends QuotaDefaults {
  now?: () => number;
}

/**
 * Timed amounts of one key, oldest first, with their sum. Expired entries are dropped by moving
 * `head`, not by `Array.prototype.shift` (which copies the whole array once it is large: at a
 * high `rpm` limit the window holds one entry per request of the last minute).
 */
class SlidingWindow {
  #times: number[] = [];
  #amounts: number[] = [];
  #head = 0;
  #sum = 0;

  get size(): number {
    return this.#times.length - this.#head;
  }

  get sum(): number {
    return this.#sum;
  }

  get oldest(): number | undefined {
    return this.#times[this.#head];
  }

  dropUpTo(time: number): void {
    while (this.#head < this.#times.length && this.#times[this.#head]! <= time) {
      this.#sum -= this.#amounts[this.#head]!;
      this.#head += 1;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#amounts = this.#amounts.slice(this.#head);
      this.#head = 0;
    }
  }

  push(time: number, amount = 1): void {
    this.#times.push(time);
    this.#amounts.push(amount);
    this.#sum += amount;
  }

  /** When the window next has room: its oldest entry leaves it. */
  resetMs(time: number): number {
    const oldest = this.oldest;
    return oldest === undefined ? WINDOW_MS : oldest + WINDOW_MS - time;
  }
}

export interface QuotaSnapshot {
  /** Open concurrency leases per key id (Redis answers asynchronously). */
  inFlight(keyId: string): number | Promise<number>;
}

export function createMemoryQuotas(
  initial: MemoryQuotaOptions,
): QuotaLimiter & QuotaSnapshot & Required<Pick<QuotaLimiter, "configure">> {
  const now = initial.now ?? Date.now;
  let options: QuotaDefaults = { ...initial };
  const admissions = new Map<string, SlidingWindow>();
  const tokens = new Map<string, SlidingWindow>();
  const leases = new Map<string, Map<number, number>>();
  let nextLeaseId = 0;

  function windowOf(table: Map<string, SlidingWindow>, id: string, time: number): SlidingWindow {
    let window = table.get(id);
    if (!window) {
      window = new SlidingWindow();
      table.set(id, window);
    }
    window.dropUpTo(time - WINDOW_MS);
    return window;
  }

  function openLeases(keyId: string, time: number): Map<number, number> {
    let open = leases.get(keyId);
    if (!open) {
      open = new Map();
      leases.set(keyId, open);
    }
    // Leases are kept in the order they were taken, so the expired ones lead: stop at the first
    // that is still open (a scan of every open lease per request would grow with concurrency).
    // After the TTL is lowered, a lease behind an older, longer one waits for it: counted open
    // a little longer, never shorter.
    for (const [id, expiresAt] of open) {
      if (expiresAt > time) break;
      open.delete(id);
    }
    return open;
  }

  /**
   * The key's quota chain and the ids it leases and meters, worked out once per key record (the
   * authenticator keeps one record per key until the key changes) and per set of defaults.
   */
  const plans = new WeakMap<
    ApiKeyRecord,
    { options: QuotaDefaults; chain: QuotaHolder[]; leased: string[]; metered: string[] }
  >();
  function planOf(key: ApiKeyRecord) {
    const known = plans.get(key);
    if (known?.options === options) return known;
    const chain = quotaChain(key, options);
    const plan = {
      options,
      chain,
      leased: chain.filter((holder) => holder.concurrency !== null).map(({ id }) => id),
      metered: chain.filter((holder) => holder.tpm !== null).map(({ id }) => id),
    };
    plans.set(key, plan);
    return plan;
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
      const { chain, leased, metered } = planOf(key);
      let requests: Tightest | undefined;
      let tokenBudget: Tightest | undefined;
      let concurrency: number | undefined;
      // Every budget is checked before any is spent: a refused request spends nothing.
      for (const holder of chain) {
        if (holder.rpm !== null) {
          const window = windowOf(admissions, holder.id, time);
          const resetMs = window.resetMs(time);
          if (window.size >= holder.rpm)
            throw quotaExceeded("requests", holder.rpm, resetMs, holder);
          const remaining = holder.rpm - window.size - 1;
          requests = tighter(requests, { limit: holder.rpm, remaining, resetMs });
        }
        if (holder.tpm !== null) {
          const window = windowOf(tokens, holder.id, time);
          const resetMs = window.resetMs(time);
          if (window.sum >= holder.tpm) throw quotaExceeded("tokens", holder.tpm, resetMs, holder);
          const remaining = holder.tpm - window.sum;
          tokenBudget = tighter(tokenBudget, { limit: holder.tpm, remaining, resetMs });
        }
        if (holder.concurrency !== null) {
          if (openLeases(holder.id, time).size >= holder.concurrency)
            throw quotaExceeded("concurrency", holder.concurrency, 0, holder);
          concurrency = Math.min(concurrency ?? holder.concurrency, holder.concurrency);
        }
      }
      const leaseId = leased.length > 0 ? nextLeaseId++ : undefined;
      if (leaseId !== undefined)
        for (const id of leased) leases.get(id)?.set(leaseId, time + options.leaseTtlMs);
      for (const holder of chain)
        if (holder.rpm !== null) windowOf(admissions, holder.id, time).push(time);
      let released = false;
      let spent = false;
      const lease: QuotaLease = {
        headers: admissionHeaders({ requests, tokens: tokenBudget, concurrency }),
        spend(used) {
          if (spent || used <= 0) return;
          spent = true;
          const at = now();
          for (const id of metered) windowOf(tokens, id, at).push(at, used);
        },
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
