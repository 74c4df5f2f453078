/**
 * @module store/sql-credit-codes
 * Prepaid credit codes over Kysely. Redemption is one transaction: the code is claimed by a
 * conditional update (only a code that is neither redeemed, revoked nor expired matches, so of
 * two redemptions at once exactly one claims it: PostgreSQL's row lock makes the second see the
 * first's mark, SQLite runs bodies one at a time), the balance moves within the maximum, and the
 * ledger gets its `credit_code` entry. A refused credit rolls the claim back.
 */
import { type CompiledQuery, type Kysely, type Selectable, sql } from "kysely";
import { newId } from "./ids.ts";
import type { CreditCodesTable, Database } from "./schema.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { CreditCode, CreditCodeStore, RedeemResult } from "./types.ts";

const readTime = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

function toCreditCode(row: Selectable<CreditCodesTable>): CreditCode {
  return {
    id: row.id,
    prefix: row.prefix,
    amountMicros: Number(row.amount_micros),
    note: row.note,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    expiresAt: readTime(row.expires_at),
    redeemedAt: readTime(row.redeemed_at),
    redeemedBy: row.redeemed_by,
    revokedAt: readTime(row.revoked_at),
  };
}

/** Thrown inside the redemption body to roll the claim back when the credit does not fit. */
class CreditAboveMaximum extends Error {
  constructor(
    readonly balanceMicros: number,
    readonly amountMicros: number,
  ) {
    super("credit above the maximum balance");
  }
}

export function sqlCreditCodeStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): CreditCodeStore {
  return {
    async createCreditCodes(codes) {
      if (codes.length === 0) return;
      await db
        .insertInto("credit_codes")
        .values(
          codes.map((code) => ({
            id: code.id,
            code_hash: code.codeHash,
            prefix: code.prefix,
            amount_micros: code.amountMicros,
            note: code.note,
            created_by: code.createdBy,
            created_at: code.createdAt,
            expires_at: code.expiresAt,
            redeemed_at: null,
            redeemed_by: null,
            revoked_at: null,
          })),
        )
        .execute();
    },

    async listCreditCodes({ limit, after, status, now }) {
      let query = db.selectFrom("credit_codes").selectAll();
      if (after) {
        query = query.where((eb) =>
          eb.or([
            eb("created_at", "<", after.createdAt),
            eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)]),
          ]),
        );
      }
      if (status === "redeemed") query = query.where("redeemed_at", "is not", null);
      if (status === "revoked")
        query = query.where("revoked_at", "is not", null).where("redeemed_at", "is", null);
      if (status === "active" || status === "expired") {
        query = query.where("redeemed_at", "is", null).where("revoked_at", "is", null);
        query =
          status === "active"
            ? query.where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
            : query.where("expires_at", "<=", now);
      }
      const rows = await query
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
      return rows.map(toCreditCode);
    },

    async findCreditCode(id) {
      const row = await db
        .selectFrom("credit_codes")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toCreditCode(row);
    },

    async revokeCreditCode(id, at) {
      await db
        .updateTable("credit_codes")
        .set({ revoked_at: at })
        .where("id", "=", id)
        .where("redeemed_at", "is", null)
        .where("revoked_at", "is", null)
        .execute();
      const row = await db
        .selectFrom("credit_codes")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toCreditCode(row);
    },

    async redeemCreditCode({ codeHash, accountId, at, maxBalanceMicros }) {
      try {
        return await transactions.run(function* (): Generator<
          CompiledQuery,
          RedeemResult,
          Record<string, unknown>[]
        > {
          const [claimed] = (yield db
            .updateTable("credit_codes")
            .set({ redeemed_at: at, redeemed_by: accountId })
            .where("code_hash", "=", codeHash)
            .where("redeemed_at", "is", null)
            .where("revoked_at", "is", null)
            .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]))
            .returningAll()
            .compile()) as Array<Selectable<CreditCodesTable>>;
          if (!claimed) {
            const [existing] = (yield db
              .selectFrom("credit_codes")
              .select(["redeemed_at"])
              .where("code_hash", "=", codeHash)
              .compile()) as Array<{ redeemed_at: number | null }>;
            return existing && existing.redeemed_at !== null
              ? { redeemed: false, reason: "redeemed" }
              : { redeemed: false, reason: "unknown" };
          }
          const code = toCreditCode(claimed);
          const amount = code.amountMicros;
          const [updated] = (yield db
            .updateTable("accounts")
            .set({ balance_micros: sql`balance_micros + ${amount}` })
            .where("id", "=", accountId)
            .where(sql<boolean>`balance_micros + ${amount} <= ${maxBalanceMicros}`)
            .returning("balance_micros")
            .compile()) as Array<{ balance_micros: number }>;
          if (!updated) {
            const [account] = (yield db
              .selectFrom("accounts")
              .select(["balance_micros"])
              .where("id", "=", accountId)
              .compile()) as Array<{ balance_micros: number }>;
            if (!account) throw new Error(`No account ${accountId}`);
            throw new CreditAboveMaximum(Number(account.balance_micros), amount);
          }
          yield db
            .insertInto("ledger_entries")
            .values({
              id: newId("led"),
              account_id: accountId,
              kind: "credit_code",
              amount_micros: amount,
              hold_micros: 0,
              request_id: null,
              key_id: null,
              model: null,
              breakdown: null,
              reason: `credit code ${code.prefix} (${code.id})`,
              created_at: at,
            })
            .compile();
          return { redeemed: true, code, balanceMicros: Number(updated.balance_micros) };
        });
      } catch (error) {
        if (!(error instanceof CreditAboveMaximum)) throw error;
        return {
          redeemed: false,
          reason: "above_maximum",
          balanceMicros: error.balanceMicros,
          amountMicros: error.amountMicros,
        };
      }
    },
  };
}
