/**
 * @module store/spend-limits
 * Key spend caps, checked inside the transaction that places a hold (docs/budgets.md). A cap
 * counts what the key and every key below it were charged in the current period (their usage
 * records) plus what they hold now (open requests and video tasks); a hold is placed only if
 * that plus the new hold stays within the cap. Charges never exceed holds, so no burst can
 * overshoot a cap:
 * - SQLite: the transaction body runs synchronously in the one process that writes the file,
 *   and its holds are in the `HoldBook`, so nothing comes between the check and the hold;
 * - PostgreSQL: the account row is locked first (`FOR UPDATE`); every hold and settlement of
 *   the account updates that row, so they queue behind the check, and the check reads spent
 *   and held in one statement (one snapshot).
 */
import { type CompiledQuery, type Kysely, sql } from "kysely";
import type { SpendLimitCheck, SpendLimitRefusal } from "./billing-types.ts";
import type { HoldBook } from "./hold-book.ts";
import type { Database } from "./schema.ts";
import { isDayStart, spentSince } from "./spend-by-day.ts";

type Row = Record<string, unknown>;

/** The key and every key minted below it, at any depth, as a recursive CTE named `tree`. */
function subtree(keyId: string) {
  return sql`with recursive tree(id) as (
    select id from api_keys where id = ${keyId}
    union all
    select api_keys.id from api_keys inner join tree on api_keys.parent_key_id = tree.id
  )`;
}

/** Spent since the period's start and held now, by the subtree of `keyId`. */
export function keySpendQuery(
  db: Kysely<Database>,
  accountId: string,
  keyId: string,
  since: number,
  heldInTable: boolean,
): CompiledQuery {
  const requestHolds = heldInTable
    ? sql`(select coalesce(sum(hold_micros), 0) from inflight_requests
          where key_id in (select id from tree))`
    : sql`0`;
  // The subtree's spend from its day rows (spend-by-day.ts); a period that does not start at a
  // UTC midnight (none does today) is summed from the usage records instead.
  const spent = isDayStart(since)
    ? spentSince(keyId, since)
    : sql`(select coalesce(sum(cost_micros), 0) from usage_records
        where account_id = ${accountId} and created_at >= ${since}
        and key_id in (select id from tree))`;
  return sql`${subtree(keyId)}
    select
      ${spent} as spent,
      ${requestHolds} as request_holds,
      (select coalesce(sum(hold_micros), 0) from video_tasks
        where key_id in (select id from tree) and billing_state in ('held', 'finalizing'))
        as task_holds`.compile(db);
}

const roomOf = (refusal: SpendLimitRefusal) =>
  refusal.limitMicros - refusal.spentMicros - refusal.heldMicros;

function subtreeIds(db: Kysely<Database>, keyId: string): CompiledQuery {
  return sql`${subtree(keyId)} select id from tree`.compile(db);
}

/**
 * Checks `amountMicros` against every cap, inside a transaction body; returns, of the caps it
 * does not fit under, the one with the least room left (so an output cap lowered to that room
 * fits every cap), or undefined. `book` holds the in-memory holds (SQLite); without it holds
 * are read from the table and the account row is locked first.
 */
export function* checkSpendLimits(
  db: Kysely<Database>,
  input: {
    accountId: string;
    amountMicros: number;
    limits: readonly SpendLimitCheck[] | undefined;
    lockAccount: boolean;
  },
  book: HoldBook | undefined,
): Generator<CompiledQuery, SpendLimitRefusal | undefined, Row[]> {
  const limits = input.limits ?? [];
  if (limits.length === 0) return undefined;
  if (input.lockAccount) {
    yield db
      .selectFrom("accounts")
      .select("id")
      .where("id", "=", input.accountId)
      .forUpdate()
      .compile();
  }
  let tightest: SpendLimitRefusal | undefined;
  for (const limit of limits) {
    const [row] = yield keySpendQuery(db, input.accountId, limit.keyId, limit.since, !book);
    let heldMicros = Number(row?.request_holds ?? 0) + Number(row?.task_holds ?? 0);
    if (book) {
      const ids = (yield subtreeIds(db, limit.keyId)).map((entry) => String(entry.id));
      heldMicros += book.heldForKeys(ids);
    }
    const spentMicros = Number(row?.spent ?? 0);
    const room = limit.limitMicros - spentMicros - heldMicros;
    if (input.amountMicros > room && (!tightest || room < roomOf(tightest)))
      tightest = { ...limit, spentMicros, heldMicros };
  }
  return tightest;
}
