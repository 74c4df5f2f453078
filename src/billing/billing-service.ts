/**
 * @module billing/billing-service
 * The billing hooks of the request pipeline: reserve a hold before the upstream call, settle the
 * real cost after it, release the hold on failure. `createLedgerBilling` is the real service;
 * every amount goes through the one ledger in the store.
 */
import type { CatalogModel } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { Usage } from "../spec/index.ts";
import type { BillingStore, UsageRecord } from "../store/index.ts";
import { breakdownOf, priceUsage } from "./pricing.ts";

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

export interface SettleDetails {
  status?: "succeeded" | "aborted";
  upstreamRequestId?: string;
  ttfbMs?: number;
}

export interface Reservation {
  readonly heldMicros: number;
  /** Charges the actual cost of `usage` and releases the rest of the hold. Idempotent. */
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  /** Releases the hold without charging (upstream failure). Idempotent. */
  release(reason: string): Promise<void>;
}

export interface BillingService {
  reserve(input: ReserveInput): Promise<Reservation>;
}

function usageRecord(input: ReserveInput, usage: Usage, started: number, now: number): UsageRecord {
  const tokens = usage.tokens;
  const media = usage.media;
  return {
    requestId: input.requestId,
    accountId: input.accountId,
    keyId: input.keyId,
    model: input.model.id,
    endpoint: input.endpoint,
    status: "succeeded",
    inputTokens: tokens?.input.total ?? 0,
    cachedInputTokens: tokens?.input.cacheRead ?? 0,
    cacheWriteTokens: tokens?.input.cacheWrite ?? 0,
    outputTokens: tokens?.output.total ?? 0,
    reasoningTokens: tokens?.output.reasoning ?? 0,
    images: media?.images?.count ?? 0,
    videoSeconds: media?.videoSeconds?.seconds ?? 0,
    characters: media?.characters ?? 0,
    costMicros: 0,
    heldMicros: 0,
    usageSource: tokens?.source ?? media?.source ?? null,
    upstreamRequestId: null,
    latencyMs: Math.round(now - started),
    ttfbMs: null,
    breakdown: null,
    createdAt: now,
  };
}

export function createLedgerBilling(
  store: BillingStore,
  clock: () => number = Date.now,
): BillingService {
  return {
    async reserve(input) {
      const started = clock();
      const hold = Math.max(0, Math.ceil(input.estimateMicros));
      if (hold > 0) {
        const result = await store.placeHold({
          requestId: input.requestId,
          accountId: input.accountId,
          keyId: input.keyId,
          model: input.model.id,
          amountMicros: hold,
        });
        if (!result.placed) {
          throw new GatewayError("insufficient_balance", {
            required: hold,
            available: Math.max(0, result.availableMicros),
          });
        }
      }
      let settled: Promise<Settlement> | undefined;
      return {
        heldMicros: hold,
        settle(usage, details = {}) {
          settled ??= (async () => {
            const priced = priceUsage(input.model.pricing, usage);
            const breakdown = breakdownOf(priced.lineItems);
            await store.settle({
              ...usageRecord(input, usage, started, clock()),
              status: details.status ?? "succeeded",
              costMicros: priced.costMicros,
              upstreamRequestId: details.upstreamRequestId ?? null,
              ttfbMs: details.ttfbMs === undefined ? null : Math.round(details.ttfbMs),
              breakdown,
            });
            return { costMicros: priced.costMicros, breakdown };
          })();
          return settled;
        },
        async release(reason) {
          if (settled) return;
          await store.releaseHold(
            { ...usageRecord(input, {}, started, clock()), status: "failed" },
            reason,
          );
        },
      };
    },
  };
}

/** Billing that holds and charges nothing (for tests of unrelated parts). */
export function createFreeBilling(): BillingService {
  const settlement: Settlement = { costMicros: 0, breakdown: {} };
  const reservation: Reservation = {
    heldMicros: 0,
    settle: async () => settlement,
    release: async () => {},
  };
  return { reserve: async () => reservation };
}
