/**
 * @module limits/memory-quotas
 * In-memory rate and concurrency quotas for a single instance (the embedded default).
 * - Requests per minute: a sliding one-minute window of admission times per key, so exactly
 *   `rpm` requests pass in any 60 seconds.
 * - Concurrency: leases with an expiry, not bare counters. A lease is released when its request
 *   ends; one that is never released (a bug, a crash of the handler) expires by itself, so a
 *   slot can never leak for good.
 */
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { QuotaLease, QuotaLimiter } from "./quota-limiter.ts";

export interface MemoryQuotaOptions {
  defaultRpm: number | null;
  defaultConcurrency: number | null;
  leaseTtlMs: number;
  now?: () => number;
}

const WINDOW_MS = 60_000;

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

export function createMemoryQuotas(options: MemoryQuotaOptions): QuotaLimiter & QuotaSnapshot {
  const now = options.now ?? Date.now;
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
    inFlight(keyId) {
      return openLeases(keyId, now()).size;
    },
    async acquire(key: ApiKeyRecord) {
      const time = now();
      const headers: Record<string, string> = {};
      const rpm = key.rpm ?? options.defaultRpm;
      let window: AdmissionWindow | undefined;
      if (rpm !== null) {
        window = admissions.get(key.id) ?? new AdmissionWindow();
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
        headers["x-ratelimit-limit-requests"] = String(rpm);
        headers["x-ratelimit-remaining-requests"] = String(rpm - window.size - 1);
        headers["x-ratelimit-reset-requests"] =
          `${Math.max(1, Math.ceil((oldest === undefined ? WINDOW_MS : resetMs) / 1000))}s`;
      }
      const concurrency = key.concurrency ?? options.defaultConcurrency;
      let leaseId: number | undefined;
      if (concurrency !== null) {
        const open = openLeases(key.id, time);
        if (open.size >= concurrency) {
          throw new GatewayError(
            "concurrency_limited",
            {},
            {
              headers: { "retry-after": "1", "x-ratelimit-limit-concurrency": String(concurrency) },
            },
          );
        }
        leaseId = nextLeaseId++;
        open.set(leaseId, time + options.leaseTtlMs);
        headers["x-ratelimit-limit-concurrency"] = String(concurrency);
      }
      if (window) {
        window.push(time);
        admissions.set(key.id, window);
      }
      let released = false;
      const lease: QuotaLease = {
        headers,
        release() {
          if (released || leaseId === undefined) return;
          released = true;
          leases.get(key.id)?.delete(leaseId);
        },
      };
      return lease;
    },
  };
}
