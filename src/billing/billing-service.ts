/**
 * @module billing/billing-service
 * The billing hooks of the request pipeline: reserve a hold before the upstream call, settle the
 * real cost after it, release the hold on failure. `createLedgerBilling` is the real service;
 * every amount goes through the one ledger in the store.
 * A charge never exceeds its hold: usage priced above it (a vendor that ignored the output cap,
 * usage that arrived larger than estimated) is charged at the hold, and the rest is recorded as
 * an overrun. Long requests write checkpoints of what they delivered, which is what a restart
 * charges if the process dies before settling.
 */
import type { CatalogModel } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { Usage } from "../spec/index.ts";
import type { BillingStore, UsageRecord } from "../store/index.ts";
import { breakdownOf, priceUsage } from "./pricing.ts";
import { type KeySpendLimit, spendLimitChecks, spendLimitReached } from "./spend-limits.ts";

export interface ReserveInput {
  requestId: string;
  accountId: string;
  keyId: string;
  model: CatalogModel;
  endpoint: string;
  /** The most this request may cost, in micro-USD. */
  estimateMicros: number;
  /** The least it costs once sent (its input), charged if the process dies before settling. */
  floorMicros?: number;
  /** The output cap sent upstream, when it was lowered to fit the balance. */
  outputCapLoweredTo?: number;
  /** The key spend caps the hold must fit under (`spendLimitsOf(key)`). */
  spendLimits?: readonly KeySpendLimit[];
  /** Who the request was for, as the client said; written on the usage record. */
  attribution?: UsageAttribution;
}

/** The end user and metadata pairs a request named (`core/attribution.ts` reads them). */
export interface UsageAttribution {
  endUser: string | null;
  metadata: Record<string, string> | null;
}

export interface Settlement {
  costMicros: number;
  breakdown: Record<string, number>;
  /** Priced cost above the hold, not charged. */
  overrunMicros: number;
}

export interface SettleDetails {
  /** `interrupted`: the upstream broke after units were delivered (they are billed). */
  status?: "succeeded" | "aborted" | "interrupted";
  upstreamRequestId?: string;
  ttfbMs?: number;
}

export interface Reservation {
  readonly heldMicros: number;
  /** Charges the actual cost of `usage` and releases the rest of the hold. Idempotent. */
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  /** Releases the hold without charging (upstream failure). Idempotent. */
  release(reason: string): Promise<void>;
  /** Records what was delivered so far: the charge if the process dies before settling. */
  checkpoint(usage: Usage): Promise<void>;
  /** The request starts delivering: a restart after a crash settles it from now on. */
  beginDelivery(): Promise<void>;
}

/** Line item of the breakdown that takes back the cost above the hold. */
export const OVERRUN_ITEM = "overrun_waived";

/** Prices `usage` and caps the cost at `hold`; the breakdown still adds up to the cost. */
export function priceWithinHold(
  model: CatalogModel,
  usage: Usage,
  hold: number,
): Settlement & { lineItemsTotal: number } {
  const priced = priceUsage(model.pricing, usage);
  const costMicros = Math.min(priced.costMicros, hold);
  const overrunMicros = priced.costMicros - costMicros;
  const breakdown = breakdownOf(priced.lineItems);
  if (overrunMicros > 0) breakdown[OVERRUN_ITEM] = -overrunMicros;
  return { costMicros, breakdown, overrunMicros, lineItemsTotal: priced.costMicros };
}

export interface BillingService {
  reserve(input: ReserveInput): Promise<Reservation>;
  /**
   * Writes again the settlements and releases the store refused (the database away): each
   * request's last closing, a release replacing a settlement that failed before the answer was
   * delivered. Resolves to how many were written now; called by the periodic in-flight sweep,
   * and with `final` at shutdown, once no request is under way (no closing can replace another
   * then, so none waits).
   */
  retryUnwritten(options?: { final?: boolean }): Promise<number>;
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
    overrunMicros: 0,
    outputCapLoweredTo: null,
    endUser: input.attribution?.endUser ?? null,
    metadata: input.attribution?.metadata ?? null,
  };
}

export interface LedgerBillingOptions {
  /** The process placing holds (named in their in-flight rows). */
  instanceId: string;
  clock?: () => number;
  /** Told of every charge once it is written (soft-limit alerts watch the account's spend). */
  onCharged?: (charge: { accountId: string; keyId: string; costMicros: number }) => void;
}

/** How long a refused closing waits before a retry may write it. */
const RETRY_AFTER_MS = 1_000;

export function createLedgerBilling(
  store: BillingStore,
  options: LedgerBillingOptions,
): BillingService {
  const clock = options.clock ?? Date.now;
  /** Closings the store refused, by request, with when: written again by `retryUnwritten`. */
  const unwritten = new Map<string, { write: () => Promise<unknown>; refusedAt: number }>();
  /** Writes a closing; if the store refuses it, keeps it for a retry and throws. */
  const close = async <T>(requestId: string, write: () => Promise<T>): Promise<T> => {
    try {
      const written = await write();
      unwritten.delete(requestId);
      return written;
    } catch (error) {
      unwritten.set(requestId, { write, refusedAt: clock() });
      throw error;
    }
  };
  return {
    async retryUnwritten(options = {}) {
      let written = 0;
      for (const [requestId, entry] of [...unwritten]) {
        // A refused settlement of an answer that then failed is replaced by its release at once;
        // a retry in between would charge an answer the client never got.
        if (!options.final && clock() - entry.refusedAt < RETRY_AFTER_MS) continue;
        try {
          await entry.write();
          // A newer closing of the same request may have replaced this one meanwhile.
          if (unwritten.get(requestId) === entry) unwritten.delete(requestId);
          written += 1;
        } catch {
          // Still refused: the next sweep tries again.
        }
      }
      return written;
    },
    async reserve(input) {
      const started = clock();
      const hold = Math.max(0, Math.ceil(input.estimateMicros));
      if (hold > 0) {
        const limits = input.spendLimits ?? [];
        const result = await store.placeHold({
          requestId: input.requestId,
          accountId: input.accountId,
          keyId: input.keyId,
          model: input.model.id,
          endpoint: input.endpoint,
          instanceId: options.instanceId,
          amountMicros: hold,
          floorMicros: Math.max(0, Math.min(hold, Math.floor(input.floorMicros ?? 0))),
          ...(limits.length > 0 && { spendLimits: spendLimitChecks(limits, started) }),
        });
        if (!result.placed && result.spendLimit)
          throw spendLimitReached(result.spendLimit, limits, hold, started);
        if (!result.placed) {
          throw new GatewayError("insufficient_balance", {
            required: hold,
            available: Math.max(0, result.availableMicros),
          });
        }
      }
      const floor = Math.max(0, Math.min(hold, Math.floor(input.floorMicros ?? 0)));
      let settled: Promise<Settlement> | undefined;
      /** The in-flight row was written (a stream started delivering). */
      let recorded = false;
      return {
        heldMicros: hold,
        settle(usage, details = {}) {
          settled ??= (async () => {
            const priced = priceWithinHold(input.model, usage, hold);
            const record = usageRecord(input, usage, started, clock());
            record.status = details.status ?? "succeeded";
            record.costMicros = priced.costMicros;
            record.heldMicros = hold;
            record.upstreamRequestId = details.upstreamRequestId ?? null;
            record.ttfbMs = details.ttfbMs === undefined ? null : Math.round(details.ttfbMs);
            record.breakdown = priced.breakdown;
            record.overrunMicros = priced.overrunMicros;
            record.outputCapLoweredTo = input.outputCapLoweredTo ?? null;
            // A write whose outcome is unknown (the database's connection dropped after the
            // statement) is tried once more at once: the record's closing id tells a commit of
            // the first attempt from a request another path closed meanwhile.
            // A write refused twice is `store_unavailable`: the database's own words (a file
            // path, a lock) are not the client's business.
            const write = () =>
              store
                .settle(record)
                .catch(() => store.settle(record))
                .catch((error: unknown) => {
                  throw GatewayError.isInstance(error)
                    ? error
                    : new GatewayError("store_unavailable", {}, { cause: error });
                });
            const { ownClosing } = await close(input.requestId, write);
            // Closed by another path (an instance taken for dead was settled by a peer's
            // recovery): what it charged stands, and the answer is not delivered on top of it.
            if (!ownClosing) throw new GatewayError("request_abandoned");
            if (priced.costMicros > 0)
              options.onCharged?.({
                accountId: input.accountId,
                keyId: input.keyId,
                costMicros: priced.costMicros,
              });
            return {
              costMicros: priced.costMicros,
              breakdown: priced.breakdown,
              overrunMicros: priced.overrunMicros,
            };
          })();
          return settled;
        },
        async beginDelivery() {
          if (hold === 0) return;
          await store.recordInflight(input.requestId, floor);
          recorded = true;
        },
        async checkpoint(usage) {
          if (settled || hold === 0) return;
          const { costMicros, breakdown } = priceWithinHold(input.model, usage, hold);
          const { requestId: _id, ...record } = usageRecord(input, usage, started, clock());
          const open = await store.checkpoint({
            requestId: input.requestId,
            costMicros,
            record: {
              inputTokens: record.inputTokens,
              cachedInputTokens: record.cachedInputTokens,
              cacheWriteTokens: record.cacheWriteTokens,
              outputTokens: record.outputTokens,
              reasoningTokens: record.reasoningTokens,
              images: record.images,
              videoSeconds: record.videoSeconds,
              characters: record.characters,
              breakdown,
            },
          });
          // The row written before the first byte is gone: another instance took this one for
          // dead and settled the request. Delivering on would be free.
          if (!open && recorded && !settled) throw new GatewayError("request_abandoned");
        },
        async release(reason) {
          // Settled (or settling) already, unless that settlement was refused: then nothing
          // was delivered on its strength, and the release replaces it.
          if (settled && !unwritten.has(input.requestId)) return;
          const record = {
            ...usageRecord(input, {}, started, clock()),
            status: "failed" as const,
            outputCapLoweredTo: input.outputCapLoweredTo ?? null,
          };
          await close(input.requestId, () => store.releaseHold(record, reason));
        },
      };
    },
  };
}

/** Billing that holds and charges nothing (for tests of unrelated parts). */
export function createFreeBilling(): BillingService {
  const settlement: Settlement = { costMicros: 0, breakdown: {}, overrunMicros: 0 };
  const reservation: Reservation = {
    heldMicros: 0,
    settle: async () => settlement,
    release: async () => {},
    checkpoint: async () => {},
    beginDelivery: async () => {},
  };
  return { reserve: async () => reservation, retryUnwritten: async () => 0 };
}
