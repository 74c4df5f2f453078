/**
 * @module store/budget-webhooks
 * The webhook deliveries of budget alerts in the database (migration 0016, docs/budgets.md):
 * each alert's row carries its event as sent, the state of its delivery, when the next attempt
 * is due and who holds it (a lease). An instance takes the due deliveries with a conditional
 * update (only one wins a delivery), makes an attempt and records it; a lease that ran out (its
 * instance stopped mid-attempt) makes the delivery due again for any instance.
 */
import { type Kysely, type Migration, sql } from "kysely";
import type { BudgetStore, BudgetWebhookDelivery } from "./budget-types.ts";
import type { Database } from "./schema.ts";

/** Migration 0016: the delivery columns, and an index of the deliveries still pending. */
export const budgetWebhooksMigration: Migration = {
  async up(db: Kysely<unknown>) {
    const columns = [
      ["webhook_url", "text"],
      ["webhook_body", "text"],
      ["webhook_state", "text"],
      ["webhook_next_at", "bigint"],
      ["webhook_lease_until", "bigint"],
      ["webhook_attempts", "integer"],
      ["webhook_first_at", "bigint"],
    ] as const;
    for (const [name, type] of columns)
      await db.schema.alterTable("budget_alerts").addColumn(name, type).execute();
    await sql`create index budget_alerts_due on budget_alerts (webhook_next_at)
      where webhook_state = 'pending'`.execute(db);
  },
};

/** The row values of a new alert's delivery: due from `at`, leased to the instance that claims it. */
export function newDelivery(webhook: {
  url: string;
  body: string;
  at: number;
  leaseUntil: number;
}) {
  return {
    webhook_url: webhook.url,
    webhook_body: webhook.body,
    webhook_state: "pending",
    webhook_next_at: webhook.at,
    webhook_lease_until: webhook.leaseUntil,
    webhook_attempts: 0,
    webhook_first_at: null,
  };
}

export function sqlBudgetWebhooks(
  db: Kysely<Database>,
): Pick<BudgetStore, "claimDueBudgetWebhooks" | "recordBudgetWebhookAttempt"> {
  return {
    async claimDueBudgetWebhooks(now, leaseMs, limit) {
      const due = await db
        .selectFrom("budget_alerts")
        .select([
          "account_id",
          "period_start",
          "threshold_bp",
          "webhook_url",
          "webhook_body",
          "webhook_attempts",
          "webhook_first_at",
          "webhook_lease_until",
        ])
        .where("webhook_state", "=", "pending")
        .where("webhook_next_at", "<=", now)
        .where("webhook_lease_until", "<", now)
        .orderBy("webhook_next_at")
        .limit(limit)
        .execute();
      const claimed: BudgetWebhookDelivery[] = [];
      for (const row of due) {
        // Only the instance whose update still finds the lease it read takes the delivery.
        const taken = await db
          .updateTable("budget_alerts")
          .set({ webhook_lease_until: now + leaseMs })
          .where("account_id", "=", row.account_id)
          .where("period_start", "=", row.period_start)
          .where("threshold_bp", "=", row.threshold_bp)
          .where("webhook_state", "=", "pending")
          .where("webhook_lease_until", "=", row.webhook_lease_until)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) !== 1) continue;
        claimed.push({
          accountId: row.account_id,
          periodStart: Number(row.period_start),
          thresholdBp: Number(row.threshold_bp),
          url: row.webhook_url ?? "",
          body: row.webhook_body ?? "",
          attempts: Number(row.webhook_attempts ?? 0),
          firstAttemptAt: row.webhook_first_at === null ? null : Number(row.webhook_first_at),
          leaseUntil: now + leaseMs,
        });
      }
      return claimed;
    },

    async recordBudgetWebhookAttempt(delivery, outcome) {
      const attempted = !(outcome.state === "gave_up" && outcome.attempted === false);
      const counted = {
        webhook_attempts: attempted
          ? sql<number>`coalesce(webhook_attempts, 0) + 1`
          : sql<number>`coalesce(webhook_attempts, 0)`,
        webhook_first_at: sql<number>`coalesce(webhook_first_at, ${outcome.at})`,
      };
      const row = () =>
        db
          .updateTable("budget_alerts")
          .where("account_id", "=", delivery.accountId)
          .where("period_start", "=", delivery.periodStart)
          .where("threshold_bp", "=", delivery.thresholdBp);
      // The outcome is written only under the lease this instance took: an attempt that
      // outlived it (another instance took the delivery over, and may have delivered it) must
      // not undo what that one recorded. A success says the receiver has the event whoever
      // holds the lease now.
      let update = row().set({
        webhook_state: outcome.state,
        webhook_next_at: outcome.state === "pending" ? outcome.nextAt : null,
        webhook_lease_until: 0,
        ...counted,
      });
      update =
        outcome.state === "delivered"
          ? update.where("webhook_state", "in", ["pending", "gave_up"])
          : update
              .where("webhook_state", "=", "pending")
              .where("webhook_lease_until", "=", delivery.leaseUntil);
      const written = await update.executeTakeFirst();
      if (Number(written.numUpdatedRows) === 0 && attempted) await row().set(counted).execute();
    },
  };
}
