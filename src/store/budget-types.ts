/**
 * @module store/budget-types
 * What the budget store keeps (docs/budgets.md): an account's monthly budget, each threshold's
 * alert (once per account, month and threshold), and the alert's webhook delivery, whose
 * attempts are leased and scheduled in the database so that an instance that stops mid-way
 * loses none of them: another instance, or the next start, takes the delivery up.
 */
import type { AuditOrigin } from "./audit-types.ts";

/** An account's monthly budget (soft limit: alerts, never refusals). */
export interface AccountBudget {
  accountId: string;
  monthlyBudgetMicros: number;
  webhookUrl: string | null;
  updatedAt: number;
}

/** Names one alert: its account, the period it counts and the threshold it reached. */
export interface BudgetAlertKey {
  accountId: string;
  periodStart: number;
  /** The threshold in basis points of the budget (0.8 → 8000). */
  thresholdBp: number;
}

/** An alert's webhook delivery: where to, and the event (kept as sent, the same on every try). */
export interface BudgetWebhookDelivery extends BudgetAlertKey {
  url: string;
  body: string;
  /** Attempts made so far. */
  attempts: number;
  /** When the first attempt was made, or null before it. */
  firstAttemptAt: number | null;
  /** The lease this instance took with the delivery: its outcome is written only under it. */
  leaseUntil: number;
}

/** How an attempt ended: delivered, given up, or due again at `nextAt`. */
export type BudgetWebhookOutcome =
  | { state: "delivered"; at: number }
  /** `attempted: false`: dropped without a send (the account removed or changed its URL). */
  | { state: "gave_up"; at: number; attempted?: boolean }
  | { state: "pending"; at: number; nextAt: number };

/** A change to an account's budget; a field left out keeps its value. */
export interface BudgetChange {
  monthlyBudgetMicros?: number | null;
  webhookUrl?: string | null;
}

export interface BudgetStore {
  findAccountBudget(accountId: string): Promise<AccountBudget | undefined>;
  /**
   * Changes the account's budget: a field left out keeps its value, a null budget removes it
   * (and its webhook). Read, merged and written in one transaction that holds the account's
   * row, so two changes at once never lose one another; with `audit`, a `budget.set` event in
   * the same transaction. Refused (nothing written) when the result would have a webhook but
   * no budget.
   */
  setAccountBudget(
    accountId: string,
    change: BudgetChange,
    audit?: AuditOrigin,
  ): Promise<{ budget: AccountBudget | undefined } | { refused: "webhook_without_budget" }>;
  /** What the account was charged since `since` (Unix ms): its spend day rows when `since` is a UTC midnight, else its usage records. */
  accountSpend(accountId: string, since: number): Promise<number>;
  /** What the key and the keys below it were charged since `since`, and hold now. */
  keySpend(
    accountId: string,
    keyId: string,
    since: number,
  ): Promise<{ spentMicros: number; heldMicros: number }>;
  /**
   * Records that `thresholdBp` (basis points of the budget) was reached in the period starting
   * at `periodStart`; true only for the first caller, so each alert goes out once. With
   * `webhook`, the alert's delivery is recorded too, due from `at` and leased to the caller
   * until `leaseUntil` (the caller makes the first attempt).
   */
  claimBudgetAlert(
    alert: BudgetAlertKey & {
      spentMicros: number;
      budgetMicros: number;
      webhook?: { url: string; body: string; at: number; leaseUntil: number };
    },
  ): Promise<boolean>;
  /** The thresholds (basis points) already alerted in the period. */
  listBudgetAlerts(accountId: string, periodStart: number): Promise<number[]>;
  /**
   * Leases up to `limit` deliveries due at `now` (not delivered, not given up, their next
   * attempt's time come, no lease running) to the caller until `now + leaseMs`.
   */
  claimDueBudgetWebhooks(
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<BudgetWebhookDelivery[]>;
  /**
   * Records an attempt of `delivery` and, while its lease is still the one this instance took,
   * its outcome, ending the lease. An attempt that outlived its lease (another instance took
   * the delivery over) is only counted, or, a success, marks the delivery delivered.
   */
  recordBudgetWebhookAttempt(
    delivery: BudgetWebhookDelivery,
    outcome: BudgetWebhookOutcome,
  ): Promise<void>;
}
