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
 * statement (a recursive walk up the key tree and an upsert). A key id that names no key (none
 * today) adds to the account's rows only, as migration 0013 and `ledger verify` count it.
 */
export function recordSpendQuery(db: Kysely<Database>): (charge: SpendCharge) => CompiledQuery {
  const template = queryTemplate(
    (args: { accountId: string; keyId: string | null; day: number; cost: number }) => ({
      compile: () => sql`with recursive ${keyTreeCte(args.keyId)} ${spendUpsert(args)}`.compile(db),
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

/** The common table expression `up(id)`: the key `keyId` and each of its ancestors. */
export function keyTreeCte(keyId: unknown) {
  return sql`up(id) as (
      select id from api_keys where id = cast(${keyId} as text)
      union all
      select api_keys.parent_key_id from api_keys inner join up on api_keys.id = up.id
        where api_keys.parent_key_id is not null
    )`;
}

/**
 * Adds `cost` to the `day` rows of the account and of every key in `up` (see `keyTreeCte`), if
 * `when` holds (a condition the statement around it may set).
 */
export function spendUpsert(
  args: { accountId: unknown; day: unknown; cost: unknown },
  when = sql`true`,
) {
  return sql`insert into spend_by_day (owner_id, day, spent_micros)
    select id, cast(${args.day} as bigint), cast(${args.cost} as bigint) from up where ${when}
    union all
    select cast(${args.accountId} as text), cast(${args.day} as bigint),
      cast(${args.cost} as bigint) where ${when}
    on conflict (owner_id, day)
      do update set spent_micros = spend_by_day.spent_micros + excluded.spent_micros`;
}

/** What `owner` (an account or a key with its subtree) was charged from `since` (a UTC midnight). */
export function spentSince(owner: string, since: number) {
  return sql<number>`(select coalesce(sum(spent_micros), 0) from spend_by_day
    where owner_id = ${owner} and day >= ${since})`;
}

/** Whether `since` starts a UTC day, so that day rows sum the spend from it exactly. */
export const isDayStart = (since: number): boolean => since % DAY_MS === 0;

const DAY_OF_RECORD = sql`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;

/** Each account's charges per day, from its usage records. */
const accountDaySums = sql`select account_id as owner_id, ${DAY_OF_RECORD} as day,
    sum(cost_micros) as spent_micros
  from usage_records where cost_micros > 0 group by account_id, ${DAY_OF_RECORD}`;

/** Every (key, key or ancestor) pair, as the recursive CTE `up`. */
const keyAncestors = sql`with recursive up(key_id, owner_id) as (
    select id, id from api_keys
    union all
    select up.key_id, api_keys.parent_key_id from up
      inner join api_keys on api_keys.id = up.owner_id
      where api_keys.parent_key_id is not null
  )`;

/** Each key's charges per day, its own and its descendants', from the usage records (needs `up`). */
const keyDaySums = sql`select up.owner_id as owner_id, ${DAY_OF_RECORD} as day,
    sum(cost_micros) as spent_micros
  from usage_records inner join up on up.key_id = usage_records.key_id
  where cost_micros > 0 group by up.owner_id, ${DAY_OF_RECORD}`;

/**
 * The day rows that differ from what the usage records say they should be (for `ledger
 * verify`): a row missing, extra, or with another sum, by owner (an account or a key).
 */
export async function spendRowDifferences(
  db: Kysely<Database>,
): Promise<Array<{ ownerId: string; detail: string }>> {
  type Row = { owner_id: string; day: unknown; spent_micros: unknown };
  const expected = new Map<string, { ownerId: string; day: string; micros: string }>();
  const note = (row: Row) => {
    const day = new Date(Number(row.day)).toISOString().slice(0, 10);
    return { key: `${row.owner_id} ${day}`, ownerId: row.owner_id, day };
  };
  const records = [
    ...(await sql<Row>`${accountDaySums}`.execute(db)).rows,
    ...(await sql<Row>`${keyAncestors} ${keyDaySums}`.execute(db)).rows,
  ];
  for (const row of records) {
    const { key, ownerId, day } = note(row);
    expected.set(key, { ownerId, day, micros: String(row.spent_micros) });
  }
  const differences: Array<{ ownerId: string; detail: string }> = [];
  const rows = await sql<Row>`select owner_id, day, spent_micros from spend_by_day`.execute(db);
  for (const row of rows.rows) {
    const { key, ownerId, day } = note(row);
    const fromRecords = expected.get(key)?.micros ?? "0";
    if (fromRecords !== String(row.spent_micros))
      differences.push({
        ownerId,
        detail: `${ownerId} on ${day}: spend row ${String(row.spent_micros)}, usage records ${fromRecords}`,
      });
    expected.delete(key);
  }
  for (const { ownerId, day, micros } of expected.values())
    differences.push({
      ownerId,
      detail: `${ownerId} on ${day}: no spend row, usage records ${micros}`,
    });
  return differences;
}

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
      await sql`insert into spend_by_day (owner_id, day, spent_micros)
        ${accountDaySums}`.execute(db);
      await sql`${keyAncestors} insert into spend_by_day (owner_id, day, spent_micros)
        ${keyDaySums}`.execute(db);
    },
  };
}
