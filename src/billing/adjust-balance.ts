/**
 * @module billing/adjust-balance
 * Credits and debits made by people (admin API, CLI, opening balances): one ledger entry each,
 * within `billing.max_balance_micros`, and never below what requests in flight hold. A refused
 * entry is a catalogued 400 naming `amount_micros`. With an idempotency key an adjustment is
 * made once per account: a retry finds the first entry (`replayed`), and the same key with
 * another amount or reason is `409 idempotency_conflict`.
 */
import { createHash } from "node:crypto";
import { GatewayError } from "../errors/index.ts";
import {
  type AuditOrigin,
  BalanceOutOfRange,
  type LedgerEntry,
  type LedgerStore,
} from "../store/index.ts";

export interface BalanceAdjustment {
  accountId: string;
  /** Positive for a credit, negative for a debit; a safe integer. */
  amountMicros: number;
  reason: string;
  maxBalanceMicros: number;
  /** Who makes it; its `account.credit` / `account.debit` event is written with the entry. */
  audit?: AuditOrigin;
  /** The client's `Idempotency-Key`: the adjustment is made at most once per account and key. */
  idempotencyKey?: string;
}

/**
 * The ledger's request id of an adjustment made under an idempotency key: a hash, so the key
 * (an operator's) does not show in the account's ledger, and per account, as the ledger's
 * request ids are unique across accounts.
 */
function adjustmentRequestId(accountId: string, key: string): string {
  return `adj_${createHash("sha256").update(`${accountId}\n${key}`).digest("hex").slice(0, 40)}`;
}

export async function adjustBalance(
  store: Pick<LedgerStore, "adjustBalance">,
  adjustment: BalanceAdjustment,
): Promise<{ entry: LedgerEntry; balanceMicros: number; replayed: boolean }> {
  const { idempotencyKey, ...rest } = adjustment;
  try {
    const result = await store.adjustBalance(
      idempotencyKey === undefined
        ? rest
        : { ...rest, requestId: adjustmentRequestId(adjustment.accountId, idempotencyKey) },
    );
    if (
      result.replayed &&
      (result.entry.amountMicros !== adjustment.amountMicros ||
        result.entry.reason !== adjustment.reason)
    )
      throw new GatewayError("idempotency_conflict", { key: idempotencyKey ?? "" });
    return result;
  } catch (error) {
    if (!(error instanceof BalanceOutOfRange)) throw error;
    const amount = adjustment.amountMicros;
    if (error.reason === "above_maximum") {
      throw new GatewayError(
        "balance_limit_exceeded",
        { balance: error.balanceMicros, amount, max: error.maxBalanceMicros },
        { param: "amount_micros" },
      );
    }
    throw new GatewayError(
      "debit_exceeds_available",
      { amount: -amount, available: Math.max(0, error.balanceMicros - error.heldMicros) },
      { param: "amount_micros" },
    );
  }
}
