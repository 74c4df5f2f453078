/**
 * @module limits/quota-limiter
 * Per-key rate and concurrency quotas. `acquire` returns a lease (released when the response,
 * including a stream, ends) or throws a `rate_limited` / `concurrency_limited` GatewayError.
 */
import type { ApiKeyRecord } from "../store/index.ts";

export interface QuotaLease {
  /** Rate-limit headers to put on the response. */
  readonly headers: Record<string, string>;
  release(): void;
}

/** The limits of keys that set none of their own (`limits.*`). */
export interface QuotaDefaults {
  defaultRpm: number | null;
  defaultConcurrency: number | null;
  leaseTtlMs: number;
}

export interface QuotaLimiter {
  acquire(key: ApiKeyRecord, requestId: string): Promise<QuotaLease>;
  /** Applies new defaults from the next request on (a configuration reload); leases stay. */
  configure?(defaults: QuotaDefaults): void;
}

export function createUnlimitedQuotas(): QuotaLimiter {
  const lease: QuotaLease = { headers: {}, release: () => {} };
  return { acquire: async () => lease };
}
