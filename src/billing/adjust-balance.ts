/**
 * @module billing/adjust-balance
 * Credits and debits made by people (admin API, CLI, opening balances): one ledger entry each,
 * within `billing.max_balance_micros`, and never below what requests in flight hold. A refused
 * entry is a catalogued 400 naming `amount_micros`.
 */
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
}

export async function adjustBalance(
  store: Pick<LedgerStore, "adjustBalance">,
  adjustment: BalanceAdjustment,
): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
  try {
    return await store.adjustBalance(adjustment);
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
