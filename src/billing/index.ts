/**
 * @module billing
 * Pricing, token counting, reservations and settlement against the ledger.
 */
export * from "./adjust-balance.ts";
export * from "./billing-service.ts";
export * from "./delivered-usage.ts";
export * from "./inflight-recovery.ts";
export * from "./pricing.ts";
export * from "./spend-limits.ts";
export * from "./tokenizer.ts";
