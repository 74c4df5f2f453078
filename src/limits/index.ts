/**
 * @module limits
 * Rate and concurrency quotas.
 */

export * from "./memory-quotas.ts";
export * from "./quota-limiter.ts";
export * from "./quota-plan.ts";
export * from "./redis-quotas.ts";
