/**
 * @module billing
 * Pricing, reservations and settlement against the ledger.
 */
export * from "./billing-service.ts";
export * from "./token-estimate.ts";
