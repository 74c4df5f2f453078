/**
 * @module limits/quota-limiter
 * Per-key rate, token and concurrency quotas. `acquire` returns a lease (released when the
 * response, including a stream, ends) or throws a `rate_limited` / `token_rate_limited` /
 * `concurrency_limited` GatewayError. The tokens a request used are told to its lease when it
 * settles (`spend`): they count against `tpm` for the next minute.
 */
import type { ApiKeyRecord } from "../store/index.ts";

export interface QuotaLease {
  /** Rate-limit headers to put on the response. */
  readonly headers: Record<string, string>;
  /** Counts the tokens the request used against the `tpm` budgets it was admitted under. */
  spend(tokens: number): void;
  release(): void;
}

/** The limits of keys that set none of their own (`limits.*`). */
export interface QuotaDefaults {
  defaultRpm: number | null;
  defaultConcurrency: number | null;
  /** Tokens per minute per key when the key sets none; null (or absent) means unlimited. */
  defaultTpm?: number | null;
  leaseTtlMs: number;
}

export interface QuotaLimiter {
  acquire(key: ApiKeyRecord, requestId: string): Promise<QuotaLease>;
  /** Applies new defaults from the next request on (a configuration reload); leases stay. */
  configure?(defaults: QuotaDefaults): void;
}

export function createUnlimitedQuotas(): QuotaLimiter {
  const lease: QuotaLease = { headers: {}, spend: () => {}, release: () => {} };
  return { acquire: async () => lease };
}
