/**
 * @module store
 * Repository interfaces and their SQL implementation (SQLite or PostgreSQL through Kysely).
 */
import { type DatabaseHandle, openDatabase } from "./connect.ts";
import { sqlAccountStore } from "./sql-accounts.ts";
import { sqlBillingStore } from "./sql-billing.ts";
import { sqlLedgerStore } from "./sql-ledger.ts";
import type { Store } from "./types.ts";

export { describeDatabaseUrl } from "./connect.ts";
export { newId, randomBase62 } from "./ids.ts";
export type * from "./types.ts";

export function sqlStore(handle: DatabaseHandle): Store {
  return {
    ...sqlAccountStore(handle.db),
    ...sqlLedgerStore(handle.db, handle.transactions),
    ...sqlBillingStore(handle.db, handle.dialect, handle.transactions),
    close: () => handle.close(),
  };
}

/** Opens the database at `url`, migrates it, and returns the store. */
export async function openStore(
  url: string,
): Promise<Store & { dialect: DatabaseHandle["dialect"] }> {
  const handle = await openDatabase(url);
  return { ...sqlStore(handle), dialect: handle.dialect };
}
