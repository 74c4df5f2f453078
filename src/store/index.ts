/**
 * @module store
 * Repository interfaces and their SQL implementation (SQLite or PostgreSQL through Kysely).
 */

import { hotQueries } from "./billing-queries.ts";
import { type DatabaseHandle, type OpenOptions, openDatabase } from "./connect.ts";
import { HoldBook } from "./hold-book.ts";
import { pgBillingStore } from "./pg-billing.ts";
import { sqlAccountStore } from "./sql-accounts.ts";
import { sqlAuditStore } from "./sql-audit.ts";
import { sqlBillingStore } from "./sql-billing.ts";
import { sqlBudgetStore } from "./sql-budgets.ts";
import { sqlCreditCodeStore } from "./sql-credit-codes.ts";
import { sqlLedgerStore } from "./sql-ledger.ts";
import { sqlResponseStore } from "./sql-responses.ts";
import { sqlSuspensionStore } from "./sql-suspension.ts";
import { sqlTaskStore } from "./sql-tasks.ts";
import type { AccountListOptions, Store } from "./types.ts";

export type * from "./audit-types.ts";
export type * from "./billing-types.ts";
export type * from "./budget-types.ts";
export { describeDatabaseUrl, type OpenOptions } from "./connect.ts";
export { isConnectionFailure } from "./connection-failure.ts";
export { newId, randomBase62, sortableBase62 } from "./ids.ts";
export { BalanceOutOfRange } from "./ledger-errors.ts";
export {
  connectRedis,
  type RedisConnection,
  type RedisOptions,
  type RedisScript,
} from "./redis.ts";
export { claimSqliteFile, sqliteFileOwner } from "./sqlite-owner.ts";
export type * from "./task-types.ts";
export type * from "./types.ts";
export { SPEND_LIMIT_PERIODS } from "./types.ts";

export interface StoreOptions {
  /**
   * Where billing holds live: `memory` for a database only this process writes (the default for
   * SQLite), `table` for one shared by several instances (always so on PostgreSQL).
   */
  holds?: "memory" | "table";
}

export function sqlStore(handle: DatabaseHandle, options: StoreOptions = {}): Store {
  const holds =
    handle.transactions.inProcess && (options.holds ?? "memory") === "memory"
      ? new HoldBook()
      : undefined;
  const accounts = sqlAccountStore(handle.db, handle.transactions);
  const billing = sqlBillingStore(handle.db, handle.dialect, handle.transactions, holds);
  return {
    ...accounts,
    ...(holds && {
      // The account's held amount includes the holds kept in memory.
      async findAccountById(id: string) {
        const account = await accounts.findAccountById(id);
        return account && { ...account, heldMicros: account.heldMicros + holds.heldFor(id) };
      },
      async listAccounts(page: AccountListOptions) {
        const list = await accounts.listAccounts(page);
        return list.map((account) => ({
          ...account,
          heldMicros: account.heldMicros + holds.heldFor(account.id),
        }));
      },
    }),
    ...sqlLedgerStore(handle.db, handle.transactions, holds && ((id) => holds.heldFor(id))),
    ...billing,
    // PostgreSQL: the hold and the settlement as one statement each (one round trip).
    ...(handle.dialect === "postgres" && pgBillingStore(handle.db, handle.transactions)),
    ...sqlTaskStore(handle.db, handle.transactions, hotQueries(handle.db), holds),
    ...sqlResponseStore(handle.db),
    ...sqlAuditStore(handle.db, handle.transactions),
    ...sqlCreditCodeStore(handle.db, handle.transactions),
    ...sqlBudgetStore(handle.db, handle.transactions, holds),
    ...sqlSuspensionStore(handle.db, handle.transactions),
    close: () => handle.close(),
  };
}

/** Opens the database at `url`, migrates it, and returns the store. */
export async function openStore(
  url: string,
  options: StoreOptions & OpenOptions = {},
): Promise<Store & { dialect: DatabaseHandle["dialect"] }> {
  const handle = await openDatabase(url, options);
  return { ...sqlStore(handle, options), dialect: handle.dialect };
}
