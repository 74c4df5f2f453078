/**
 * @module store/sql-suspension
 * An operator's suspension of an account: when and why, on the account's row, with its audit
 * event in the same transaction. What a suspension refuses is the authenticator's business
 * (`auth/authenticator`); this module only records it.
 */
import type { Kysely, Selectable } from "kysely";
import type { AccountsTable, Database } from "./schema.ts";
import { auditInsert } from "./sql-audit.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { AccountSuspensionStore } from "./types.ts";

export function sqlSuspensionStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): AccountSuspensionStore {
  return {
    setAccountSuspension(id, suspension, audit) {
      return transactions.run(function* () {
        const [row] = (yield db
          .selectFrom("accounts")
          .select(["suspended_at", "suspended_reason"])
          .where("id", "=", id)
          .compile()) as Array<
          Pick<Selectable<AccountsTable>, "suspended_at" | "suspended_reason">
        >;
        if (!row) return false;
        const suspended = row.suspended_at !== null;
        if (suspended === (suspension !== null)) return true;
        yield db
          .updateTable("accounts")
          .set({
            suspended_at: suspension?.at ?? null,
            suspended_reason: suspension?.reason ?? null,
          })
          .where("id", "=", id)
          .compile();
        if (audit) {
          yield auditInsert(
            db,
            {
              ...audit,
              reason: audit.reason ?? suspension?.reason ?? null,
              action: suspension ? "account.suspend" : "account.unsuspend",
              target: { type: "account", id },
              before: {
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
