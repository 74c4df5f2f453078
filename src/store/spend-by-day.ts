/**
 * @module store/spend-by-day
 * What was charged, summed per UTC day for every account and every key — a key's row counts its
 * own charges and those of every key minted below it. Each charge adds to its rows in the
 * transaction that writes its usage record, so a spend cap or a budget reads a handful of day
 * rows (at most one per day of the period) instead of every usage record of the period: the
 * check before a hold costs the same on the first day and after a million requests.
 * Every period the caps and budgets use (day, ISO week, calendar month, lifetime) starts at a
 * UTC midnight, so its spend is an exact sum of day rows.
 */
import { type CompiledQuery, type Kysely, type Migration, sql } from "kysely";
import { queryTemplate } from "./query-template.ts";
import type { Database } from "./schema.ts";

export const DAY_MS = 86_400_000;

/** The UTC midnight at or before `ms`. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

export interface SpendCharge {
  accountId: string;
  keyId: string | null;
  /** When the charge was made (its usage record's `created_at`). */
  at: number;
  costMicros: number;
}

/**
 * Adds a charge to the day rows of its account, its key and each of the key's ancestors: one
 * statement (a recursive walk up the key tree and an upsert).
 */
export function recordSpendQuery(db: Kysely<Database>): (charge: SpendCharge) => CompiledQuery {
  const template = queryTemplate(
    (args: { accountId: string; keyId: string | null; day: number; cost: number }) => ({
      compile: () =>
        sql`with recursive up(id) as (
            select cast(${args.keyId} as text) where cast(${args.keyId} as text) is not null
            union all
            select api_keys.parent_key_id from api_keys inner join up on api_keys.id = up.id
              where api_keys.parent_key_id is not null
          )
          insert into spend_by_day (owner_id, day, spent_micros)
          select id, cast(${args.day} as bigint), cast(${args.cost} as bigint) from up
          union all
          select cast(${args.accountId} as text), cast(${args.day} as bigint),
            cast(${args.cost} as bigint) where true
          on conflict (owner_id, day)
            do update set spent_micros = spend_by_day.spent_micros + excluded.spent_micros`.compile(
          db,
        ),
    }),
  );
  return (charge) =>
    template({
      accountId: charge.accountId,
      keyId: charge.keyId,
      day: dayOf(charge.at),
      cost: charge.costMicros,
    });
}

/** What `owner` (an account or a key with its subtree) was charged from `since` (a UTC midnight). */
export function spentSince(owner: string, since: number) {
  return sql<number>`(select coalesce(sum(spent_micros), 0) from spend_by_day
    where owner_id = ${owner} and day >= ${since})`;
}

/** Whether `since` starts a UTC day, so that day rows sum the spend from it exactly. */
export const isDayStart = (since: number): boolean => since % DAY_MS === 0;

/**
 * Migration 0013: the day rows, filled from the usage records already written (an account's
 * rows from its records; a key's from its own and its descendants' records).
 */
export function spendByDayMigration(dialect: "sqlite" | "postgres"): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let table = db.schema
        .createTable("spend_by_day")
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("day", "bigint", (c) => c.notNull())
        .addColumn("spent_micros", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("spend_by_day_pk", ["owner_id", "day"]);
      if (dialect === "sqlite") table = table.modifyEnd(sql`without rowid`);
      await table.execute();
      const day = sql`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
      await sql`insert into spend_by_day (owner_id, day, spent_micros)
        select account_id, ${day}, sum(cost_micros) from usage_records
        where cost_micros > 0 group by account_id, ${day}`.execute(db);
      await sql`with recursive up(key_id, owner_id) as (
          select id, id from api_keys
          union all
          select up.key_id, api_keys.parent_key_id from up
            inner join api_keys on api_keys.id = up.owner_id
            where api_keys.parent_key_id is not null
        )
        insert into spend_by_day (owner_id, day, spent_micros)
        select up.owner_id, ${day}, sum(cost_micros) from usage_records
          inner join up on up.key_id = usage_records.key_id
          where cost_micros > 0 group by up.owner_id, ${day}`.execute(db);
    },
  };
}
