/**
 * @module store/sql-suspension
 * An operator's suspension of an account: when and why, on the account's row, with its audit
 * event in the same transaction. What a suspension refuses is the authenticator's business
 * (`auth/authenticator`); this module only records it. Each change is a conditional update, so
 * of two at the same moment (two operators, a retried click) one changes the row and writes
 * the event and the other finds it done; a suspension by an account that another suspension
 * has just stopped fails (two admins suspending each other: one of them wins).
 */
import { type Kysely, type Selectable, sql } from "kysely";
import { GatewayError } from "../errors/index.ts";
import type { AccountsTable, Database } from "./schema.ts";
import { auditInsert } from "./sql-audit.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { AccountSuspensionStore } from "./types.ts";

type SuspensionColumns = Pick<Selectable<AccountsTable>, "suspended_at" | "suspended_reason">;

export function sqlSuspensionStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): AccountSuspensionStore {
  /** Takes the acting account's row (its lock on PostgreSQL), refused if it is suspended. */
  const actorStillActive = (actorId: string) =>
    db
      .updateTable("accounts")
      .set({ suspended_at: sql`suspended_at` })
      .where("id", "=", actorId)
      .where("suspended_at", "is", null)
      .returning("id")
      .compile();

  return {
    setAccountSuspension(id, suspension, audit) {
      return transactions.run(function* () {
        const [row] = (yield db
          .selectFrom("accounts")
          .select(["suspended_at", "suspended_reason"])
          .where("id", "=", id)
          .compile()) as SuspensionColumns[];
        if (!row) return false;
        const actor = audit?.actor.accountId ?? null;
        // Rows in id order, so two suspensions crossing each other cannot deadlock.
        const actorFirst = suspension !== null && actor !== null && actor !== id && actor < id;
        if (actorFirst) {
          const active = (yield actorStillActive(actor)) as unknown[];
          if (active.length === 0) throw new GatewayError("account_suspended");
        }
        const changed = (yield db
          .updateTable("accounts")
          .set({
            suspended_at: suspension?.at ?? null,
            suspended_reason: suspension?.reason ?? null,
          })
          .where("id", "=", id)
          .where("suspended_at", suspension ? "is" : "is not", null)
          .returning("id")
          .compile()) as unknown[];
        if (changed.length === 0) return true; // already so: nothing changes, nothing is recorded
        if (suspension !== null && actor !== null && actor !== id && !actorFirst) {
          const active = (yield actorStillActive(actor)) as unknown[];
          if (active.length === 0) throw new GatewayError("account_suspended");
        }
        if (audit) {
          yield auditInsert(
            db,
            {
              ...audit,
              reason: audit.reason ?? suspension?.reason ?? null,
              action: suspension ? "account.suspend" : "account.unsuspend",
              target: { type: "account", id },
              before: suspension
                ? { suspended_at: null, suspended_reason: null }
                : {
                    suspended_at: row.suspended_at === null ? null : Number(row.suspended_at),
                    suspended_reason: row.suspended_reason,
                  },
              after: {
                suspended_at: suspension?.at ?? null,
                suspended_reason: suspension?.reason ?? null,
              },
            },
            suspension?.at,
          );
        }
        return true;
      });
    },
  };
}
