/**
 * @module store/sql-ledger
 * The append-only ledger. Every movement of money is one entry, written in the same transaction
 * as the account's cached balance, so the balance always equals the sum of the ledger.
 */
import { type Kysely, type Selectable, sql } from "kysely";
import { newId } from "./ids.ts";
import type { Database, LedgerEntriesTable } from "./schema.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { LedgerEntry, LedgerStore } from "./types.ts";

export function toLedgerEntry(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    amountMicros: Number(row.amount_micros),
    holdMicros: Number(row.hold_micros),
    requestId: row.request_id,
    keyId: row.key_id,
    model: row.model,
    breakdown: row.breakdown === null ? null : JSON.parse(row.breakdown),
    reason: row.reason,
    createdAt: Number(row.created_at),
  };
}

export function sqlLedgerStore(db: Kysely<Database>, transactions: TransactionRunner): LedgerStore {
  return {
    async adjustBalance({ accountId, amountMicros, reason, requestId }) {
      if (!Number.isSafeInteger(amountMicros))
        throw new Error("amountMicros must be a safe integer");
      return transactions.run(function* () {
        const row = {
          id: newId("led"),
          account_id: accountId,
          kind: amountMicros >= 0 ? ("credit" as const) : ("debit" as const),
          amount_micros: amountMicros,
          hold_micros: 0,
          request_id: requestId ?? null,
          key_id: null,
          model: null,
          breakdown: null,
          reason,
          created_at: Date.now(),
        };
        const [entry] = (yield db
          .insertInto("ledger_entries")
          .values(row)
          .returningAll()
          .compile()) as Array<Selectable<LedgerEntriesTable>>;
        const [updated] = (yield db
          .updateTable("accounts")
          .set({ balance_micros: sql`balance_micros + ${amountMicros}` })
          .where("id", "=", accountId)
          .returning("balance_micros")
          .compile()) as Array<{ balance_micros: number }>;
        if (!updated) throw new Error(`No account ${accountId}`);
        return { entry: toLedgerEntry(entry!), balanceMicros: Number(updated.balance_micros) };
      });
    },
    async listEntries(accountId, { limit }) {
      const rows = await db
        .selectFrom("ledger_entries")
        .selectAll()
        .where("account_id", "=", accountId)
        .orderBy("seq", "desc")
        .limit(limit)
        .execute();
      return rows.map(toLedgerEntry);
    },
    async verify() {
      const rows = await db
        .selectFrom("accounts")
        .leftJoin("ledger_entries", "ledger_entries.account_id", "accounts.id")
        .select((eb) => [
          "accounts.id as accountId",
          "accounts.balance_micros as balance",
          "accounts.held_micros as held",
          eb.fn
            .coalesce(eb.fn.sum<number>("ledger_entries.amount_micros"), sql<number>`0`)
            .as("ledgerSum"),
          eb.fn
            .coalesce(eb.fn.sum<number>("ledger_entries.hold_micros"), sql<number>`0`)
            .as("holdSum"),
        ])
        .groupBy(["accounts.id", "accounts.balance_micros", "accounts.held_micros"])
        .execute();
      const mismatches = rows
        .map((row) => ({
          accountId: row.accountId,
          balance: Number(row.balance),
          ledgerSum: Number(row.ledgerSum),
          held: Number(row.held),
          holdSum: Number(row.holdSum),
        }))
        .filter((row) => row.balance !== row.ledgerSum || row.held !== row.holdSum || row.held < 0);
      return { accounts: rows.length, mismatches };
    },
  };
}
