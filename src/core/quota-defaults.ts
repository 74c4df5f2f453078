/**
 * @module core/quota-defaults
 * The quota defaults of the `limits` settings, for the quota limiters at start-up and on a
 * reload.
 */
import type { Config } from "../config/index.ts";
import type { QuotaDefaults } from "../limits/index.ts";

export function quotaDefaults(limits: Config["limits"]): QuotaDefaults {
  return {
    defaultRpm: limits.default_rpm,
    defaultTpm: limits.default_tpm,
    defaultConcurrency: limits.default_concurrency,
    leaseTtlMs: limits.lease_ttl_seconds * 1000,
  };
}
