/**
 * @module store/sql-ledger
 * The append-only ledger. Every movement of money is one entry, written in the same transaction
 * as the account's cached balance, so the balance always equals the sum of the ledger. A credit
 * or debit made by someone carries its audit event in that same transaction.
 */
import { type CompiledQuery, type Kysely, type Selectable, sql } from "kysely";
import { newId } from "./ids.ts";
import { BalanceOutOfRange } from "./ledger-errors.ts";
import { verifyLedger } from "./ledger-verify.ts";
import type { Database, LedgerEntriesTable } from "./schema.ts";
import { auditInsert } from "./sql-audit.ts";
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

/** An entry's request id was used before: the transaction rolls back and the first is returned. */
class Replayed extends Error {
  constructor(
    readonly entry: Selectable<LedgerEntriesTable>,
    readonly balanceMicros: number,
  ) {
    super("ledger entry replayed");
  }
}

/**
 * `heldElsewhere` gives the holds of an account kept outside the table (the in-memory hold book
 * of an embedded SQLite file), so that a debit never takes a balance below what is held.
 */
export function sqlLedgerStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
  heldElsewhere?: (accountId: string) => number,
): LedgerStore {
  return {
    async adjustBalance({ accountId, amountMicros, reason, requestId, maxBalanceMicros, audit }) {
      if (!Number.isSafeInteger(amountMicros))
        throw new Error("amountMicros must be a safe integer");
      const max = maxBalanceMicros ?? Number.MAX_SAFE_INTEGER;
      const credit = amountMicros > 0;
      // An entry with a request id is made once per account: a second one with the same id
      // finds the first and changes nothing (`Replayed`). The account's row is taken first (a
      // write that changes nothing: on PostgreSQL its lock, held to the commit), so of two
      // adjustments racing under one id, whatever their amounts, the second waits for the first
      // and then finds its entry.
      const replayCheck = function* (): Generator<CompiledQuery, void, Record<string, unknown>[]> {
        if (requestId === undefined) return;
        const [account] = (yield db
          .updateTable("accounts")
          .set({ balance_micros: sql`balance_micros` })
          .where("id", "=", accountId)
          .returning("balance_micros")
          .compile()) as Array<{ balance_micros: number }>;
        if (!account) throw new Error(`No account ${accountId}`);
        const [first] = (yield db
          .selectFrom("ledger_entries")
          .selectAll()
          .where("request_id", "=", requestId)
          .where("account_id", "=", accountId)
          .limit(1)
          .compile()) as Array<Selectable<LedgerEntriesTable>>;
        if (first) throw new Replayed(first, Number(account.balance_micros));
      };
      const adjustment = () =>
        transactions.run(function* () {
          yield* replayCheck();
          // Holds kept in memory (SQLite) are read inside the runner's synchronous step, so no
          // hold of this process can come between this read and the update.
          let elsewhere = heldElsewhere?.(accountId) ?? 0;
          if (heldElsewhere && !credit) {
            // The in-flight rows a gateway that died left (the command line runs when none serves
            // the file) are charged at its next start, up to their holds: a debit leaves them
            // room. A live gateway's rows are among its holds in memory, so the larger counts.
            const [rows] = (yield db
              .selectFrom("inflight_requests")
              .select(sql<number>`coalesce(sum(hold_micros), 0)`.as("held"))
              .where("account_id", "=", accountId)
              .compile()) as Array<{ held: number }>;
            elsewhere = Math.max(elsewhere, Number(rows?.held ?? 0));
          }
          // The maximum bounds what a credit can raise a balance to; a debit only lowers it (an
          // account above a lowered maximum can still be refunded or corrected).
          let update = db
            .updateTable("accounts")
            .set({ balance_micros: sql`balance_micros + ${amountMicros}` })
            .where("id", "=", accountId)
            .where(
              sql<boolean>`balance_micros + ${amountMicros} - held_micros - ${elsewhere} >= 0`,
            );
          if (credit)
            update = update.where(sql<boolean>`balance_micros + ${amountMicros} <= ${max}`);
          const [updated] = (yield update.returning("balance_micros").compile()) as Array<{
            balance_micros: number;
          }>;
          if (!updated) {
            const [account] = (yield db
              .selectFrom("accounts")
              .select(["balance_micros", "held_micros"])
              .where("id", "=", accountId)
              .compile()) as Array<{ balance_micros: number; held_micros: number }>;
            if (!account) throw new Error(`No account ${accountId}`);
            const balance = Number(account.balance_micros);
            const held = Number(account.held_micros) + elsewhere;
            throw new BalanceOutOfRange(
              credit && balance + amountMicros > max ? "above_maximum" : "below_held",
              balance,
              held,
              max,
            );
          }
          const [entry] = (yield db
            .insertInto("ledger_entries")
            .values({
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
            })
            .returningAll()
            .compile()) as Array<Selectable<LedgerEntriesTable>>;
          const balanceMicros = Number(updated.balance_micros);
          if (audit) {
            yield auditInsert(
              db,
              {
                ...audit,
                reason: audit.reason ?? reason,
                action: amountMicros >= 0 ? "account.credit" : "account.debit",
                target: { type: "account", id: accountId },
                before: { balance_micros: balanceMicros - amountMicros },
                after: {
                  balance_micros: balanceMicros,
                  amount_micros: amountMicros,
                  ledger_entry_id: entry!.id,
                },
              },
              Number(entry!.created_at),
            );
          }
          return { entry: toLedgerEntry(entry!), balanceMicros, replayed: false };
        });
      try {
        return await adjustment();
      } catch (error) {
        if (!(error instanceof Replayed)) throw error;
        return {
          entry: toLedgerEntry(error.entry),
          balanceMicros: error.balanceMicros,
          replayed: true,
        };
      }
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
    ledgerPage(accountId, { limit, beforeSeq, kind }) {
      return transactions.run(function* () {
        // One snapshot for the balance and the entries (SQLite runs the body alone anyway).
        if (!transactions.inProcess)
          yield sql`set transaction isolation level repeatable read`.compile(db);
        const [account] = (yield db
          .selectFrom("accounts")
          .select("balance_micros")
          .where("id", "=", accountId)
          .compile()) as Array<{ balance_micros: number }>;
        let page = db.selectFrom("ledger_entries").selectAll().where("account_id", "=", accountId);
        if (beforeSeq !== undefined) page = page.where("seq", "<", beforeSeq);
        if (kind !== undefined) page = page.where("kind", "=", kind as LedgerEntriesTable["kind"]);
        const rows = (yield page.orderBy("seq", "desc").limit(limit).compile()) as Array<
          Selectable<LedgerEntriesTable>
        >;
        const newest = rows[0];
        const oldest = rows.at(-1);
        if (!account || !newest || !oldest) return [];
        // The balance after an entry is today's balance less every amount entered since: the
        // sum above the page, then each entry of the page range (other kinds included) in turn.
        const [above] = (yield db
          .selectFrom("ledger_entries")
          .select(sql<string | number | null>`sum(amount_micros)`.as("total"))
          .where("account_id", "=", accountId)
          .where("seq", ">", newest.seq)
          .compile()) as Array<{ total: string | number | null }>;
        const moves = (yield db
          .selectFrom("ledger_entries")
          .select(["seq", "amount_micros"])
          .where("account_id", "=", accountId)
          .where("seq", ">", oldest.seq)
          .where("seq", "<=", newest.seq)
          .where("amount_micros", "<>", 0)
          .orderBy("seq", "desc")
          .compile()) as Array<{ seq: number; amount_micros: number }>;
        let balance = Number(account.balance_micros) - Number(above?.total ?? 0);
        let next = 0;
        return rows.map((row) => {
          // Step down past the moves newer than this row.
          while (next < moves.length && Number(moves[next]!.seq) > Number(row.seq)) {
            balance -= Number(moves[next]!.amount_micros);
            next++;
          }
          return { ...toLedgerEntry(row), seq: Number(row.seq), balanceAfterMicros: balance };
        });
      });
    },
    // A read transaction on this connection: run by the command line's own process, never
    // beside a serving SQLite gateway's group commits on the same connection.
    verify: () => verifyLedger(db),
  };
}
