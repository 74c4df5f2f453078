/**
 * @module limits
 * Rate and concurrency quotas.
 */
export * from "./quota-limiter.ts";
