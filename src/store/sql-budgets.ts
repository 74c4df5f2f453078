/**
 * @module store/sql-budgets
 * Budgets over Kysely (migration 0011, docs/budgets.md): an account's monthly budget and the
 * webhook its soft-limit alerts go to, the spend the alerts compare with it, a key's spend for
 * reading back, and the claim that makes each alert go out once per threshold and period (the
 * primary key decides between instances).
 */
import { type Kysely, type Selectable, sql } from "kysely";
import type { AccountBudget, BudgetStore } from "./budget-types.ts";
import { newDelivery, sqlBudgetWebhooks } from "./budget-webhooks.ts";
import type { HoldBook } from "./hold-book.ts";
import type { AccountBudgetsTable, Database } from "./schema.ts";
import { isDayStart, spentSince } from "./spend-by-day.ts";
import { keySpendQuery } from "./spend-limits.ts";
import { auditInsert } from "./sql-audit.ts";
import type { TransactionRunner } from "./transactions.ts";
import { isUniqueViolation } from "./unique-violation.ts";

function toBudget(row: Selectable<AccountBudgetsTable>): AccountBudget {
  return {
    accountId: row.account_id,
    monthlyBudgetMicros: Number(row.monthly_budget_micros),
    webhookUrl: row.webhook_url,
    updatedAt: Number(row.updated_at),
  };
}

export function sqlBudgetStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
  holds?: HoldBook,
): BudgetStore {
  const find = async (accountId: string) => {
    const row = await db
      .selectFrom("account_budgets")
      .selectAll()
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    return row && toBudget(row);
  };
  return {
    findAccountBudget: find,

    async setAccountBudget(accountId, change, audit) {
      const at = Date.now();
      // On PostgreSQL the account's row is locked first: every change of one account's budget
      // waits for the one before it, even when neither finds a budget row to lock.
      const lock = db
        .selectFrom("accounts")
        .select("id")
        .where("id", "=", accountId)
        .forUpdate()
        .compile();
      const current = db
        .selectFrom("account_budgets")
        .selectAll()
        .where("account_id", "=", accountId)
        .compile();
      const inProcess = transactions.inProcess;
      return transactions.run(function* () {
        if (!inProcess) yield lock;
        const [found] = (yield current) as Array<Selectable<AccountBudgetsTable>>;
        const previous = found && toBudget(found);
        const amount =
          change.monthlyBudgetMicros === undefined
            ? (previous?.monthlyBudgetMicros ?? null)
            : change.monthlyBudgetMicros;
        const url =
          change.webhookUrl === undefined ? (previous?.webhookUrl ?? null) : change.webhookUrl;
        // A webhook set where no budget is (or stays); removing the budget drops its webhook.
        if (amount === null && typeof change.webhookUrl === "string")
          return { refused: "webhook_without_budget" as const };
        const row =
          amount === null
            ? undefined
            : {
                account_id: accountId,
                monthly_budget_micros: amount,
                webhook_url: url,
                updated_at: at,
              };
        yield row
          ? db
              .insertInto("account_budgets")
              .values(row)
              .onConflict((conflict) =>
                conflict.column("account_id").doUpdateSet({
                  monthly_budget_micros: row.monthly_budget_micros,
                  webhook_url: row.webhook_url,
                  updated_at: row.updated_at,
                }),
              )
              .compile()
          : db.deleteFrom("account_budgets").where("account_id", "=", accountId).compile();
        if (audit) {
          // The change and its event in one transaction (docs/audit.md).
          const snapshot = (entry: AccountBudget | undefined) =>
            entry
              ? { monthly_budget_micros: entry.monthlyBudgetMicros, webhook_url: entry.webhookUrl }
              : null;
          yield auditInsert(
            db,
            {
              ...audit,
              action: "budget.set",
              target: { type: "account", id: accountId },
              before: snapshot(previous),
              after: snapshot(row && toBudget(row)),
            },
            at,
          );
        }
        return { budget: row && toBudget(row) };
      });
    },

    async accountSpend(accountId, since) {
      if (isDayStart(since)) {
        const { rows } = await sql<{
          spent: number;
        }>`select ${spentSince(accountId, since)} as spent`.execute(db);
        return Number(rows[0]?.spent ?? 0);
      }
      const row = await db
        .selectFrom("usage_records")
        .select((eb) => eb.fn.sum<number>("cost_micros").as("spent"))
        .where("account_id", "=", accountId)
        .where("created_at", ">=", since)
        .executeTakeFirst();
      return Number(row?.spent ?? 0);
    },

    async keySpend(accountId, keyId, since) {
      const { rows } = await db.executeQuery<Record<string, unknown>>(
        keySpendQuery(db, accountId, keyId, since, !holds),
      );
      const row = rows[0];
      let heldMicros = Number(row?.request_holds ?? 0) + Number(row?.task_holds ?? 0);
      if (holds) {
        const tree = await db
          .withRecursive("tree(id)", (qb) =>
            qb
              .selectFrom("api_keys")
              .select("id")
              .where("id", "=", keyId)
              .unionAll(
                qb
                  .selectFrom("api_keys")
                  .innerJoin("tree", "tree.id", "api_keys.parent_key_id")
                  .select("api_keys.id"),
              ),
          )
          .selectFrom("tree")
          .select("id")
          .execute();
        heldMicros += holds.heldForKeys(tree.map((entry) => entry.id));
      }
      return { spentMicros: Number(row?.spent ?? 0), heldMicros };
    },

    async claimBudgetAlert(alert) {
      try {
        await db
          .insertInto("budget_alerts")
          .values({
            account_id: alert.accountId,
            period_start: alert.periodStart,
            threshold_bp: alert.thresholdBp,
            spent_micros: alert.spentMicros,
            budget_micros: alert.budgetMicros,
            created_at: Date.now(),
            ...(alert.webhook && newDelivery(alert.webhook)),
          })
          .execute();
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    },

    ...sqlBudgetWebhooks(db),

    async listBudgetAlerts(accountId, periodStart) {
      const rows = await db
        .selectFrom("budget_alerts")
        .select("threshold_bp")
        .where("account_id", "=", accountId)
        .where("period_start", "=", periodStart)
        .orderBy("threshold_bp")
        .execute();
      return rows.map((row) => Number(row.threshold_bp));
    },
  };
}
