/**
 * @module billing/billing-service
 * The billing hooks of the request pipeline: reserve before the upstream call, settle with the
 * real usage after it, release on failure.
 */
import type { CatalogModel } from "../catalog/index.ts";
import type { Usage } from "../spec/index.ts";

export interface ReserveInput {
  requestId: string;
  accountId: string;
  keyId: string;
  model: CatalogModel;
  endpoint: string;
  /** The most this request may cost, in micro-USD. */
  estimateMicros: number;
}

export interface Settlement {
  costMicros: number;
  breakdown: Record<string, number>;
}

export interface Reservation {
  readonly heldMicros: number;
  /** Charges the actual cost of `usage` and releases the rest of the hold. Idempotent. */
  settle(usage: Usage): Promise<Settlement>;
  /** Releases the hold without charging (upstream failure). Idempotent. */
  release(reason: string): Promise<void>;
}

export interface BillingService {
  reserve(input: ReserveInput): Promise<Reservation>;
}

/** Billing that holds and charges nothing. Used until a ledger-backed service is configured. */
export function createFreeBilling(): BillingService {
  const settlement: Settlement = { costMicros: 0, breakdown: {} };
  const reservation: Reservation = {
    heldMicros: 0,
    settle: async () => settlement,
    release: async () => {},
  };
  return { reserve: async () => reservation };
}
