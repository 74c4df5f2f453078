/**
 * @module store/kept-balances
 * Account balances kept in memory beside the `HoldBook`, for the embedded SQLite file, so that
 * a hold can be placed without a read of the account row (and without a transaction of its own
 * when nothing else is to be checked). What is kept is only ever a committed value:
 * - every write to an account row on this connection (whatever wrote it) drops the account's
 *   entry at once, through a temporary trigger that calls back into this process;
 * - a transaction body that has just written or read the row stages its values, and staged values
 *   are kept only when their transaction commits (dropped when it rolls back);
 * - another process can write the file too, but never takes money from it while this gateway
 *   serves it (the command line is sent to the admin API for debits), so what is kept can only
 *   understate a balance; a hold the kept balance would refuse is read again before it is refused.
 */
import type SQLite from "better-sqlite3";

/** An account's committed balance and the holds written to its row (not those in memory). */
export interface KeptBalance {
  balanceMicros: number;
  heldMicros: number;
}

/** What the transaction runner tells about the bodies it ran. */
export interface CommitObserver {
  /** The transaction the staged values were read in committed. */
  committed(): void;
  /** The transaction rolled back: what it staged was never true. */
  rolledBack(): void;
}

export class KeptBalances implements CommitObserver {
  readonly #kept = new Map<string, KeptBalance>();
  readonly #staged = new Map<string, KeptBalance>();

  /** The committed balance of `accountId`, when kept. */
  get(accountId: string): KeptBalance | undefined {
    return this.#kept.get(accountId);
  }

  /** Values read inside the running transaction, kept once it commits. */
  stage(accountId: string, balanceMicros: number, heldMicros: number): void {
    this.#staged.set(accountId, { balanceMicros, heldMicros });
  }

  /** The account row was written: what was kept or staged of it is no longer known. */
  drop(accountId: string): void {
    this.#kept.delete(accountId);
    this.#staged.delete(accountId);
  }

  committed(): void {
    for (const [accountId, balance] of this.#staged) this.#kept.set(accountId, balance);
    this.#staged.clear();
  }

  rolledBack(): void {
    this.#staged.clear();
  }

  /** How many accounts are kept (tests). */
  get size(): number {
    return this.#kept.size;
  }
}

const DROPPED = "switchyard_account_written";

/**
 * Makes every write to `accounts` on this connection drop the account from `balances`: a SQL
 * function that calls back into this process and temporary triggers (this connection's own,
 * never stored in the file) after each update and delete. Call after the migrations.
 */
export function dropOnAccountWrites(sqlite: SQLite.Database, balances: KeptBalances): void {
  sqlite.function(DROPPED, { deterministic: false }, (accountId: unknown) => {
    if (typeof accountId === "string") balances.drop(accountId);
    return null;
  });
  sqlite.exec(`
    create temp trigger if not exists kept_balance_update after update on main.accounts
      begin select ${DROPPED}(old.id); end;
    create temp trigger if not exists kept_balance_delete after delete on main.accounts
      begin select ${DROPPED}(old.id); end;`);
}
