/**
 * @module store/pg-billing
 * The hold and the settlement on PostgreSQL as one statement each. Through `pg`, every statement
 * of a transaction is a round trip to the server, and a round trip costs far more than the
 * statement (a hold was `BEGIN`, four statements and `COMMIT`; a settlement eight). A single
 * statement is atomic without `BEGIN`/`COMMIT`, and data-modifying common table expressions
 * (PostgreSQL only) chain the steps so that each runs only if the one before it did:
 * - hold: the conditional reservation on the account row (never past the balance), then the
 *   hold's ledger row and the in-flight row, both only for a reservation made (a refusal reads
 *   what is available in a second statement);
 * - settlement (charge or release): the request's ledger rows read, the closing ledger row
 *   written only if none exists (the unique (request_id, kind) index stops a concurrent twin),
 *   then, only for a closing row written, the in-flight row deleted, the balance charged and
 *   the hold returned, the usage record and the spend day rows.
 * The same effects as sql-billing.ts's transaction bodies, which remain for SQLite. A hold
 * under spend caps is a transaction still: the account row locked and the caps read first
 * (spend-limits.ts), then the hold statement.
 *
 * Two closings of one request (a charge and a release, say, from a recovering instance and one
 * thought dead) read the ledger in snapshots taken before either wrote. Migration 0015 makes a
 * second closing row of any kind a conflict (a unique index over the closing rows), so the
 * later statement waits for the earlier one's commit and then writes nothing. SQLite needs no
 * such index: one writer runs one body at a time, and each body reads the rows it writes after.
 */
import { type CompiledQuery, type Kysely, type Migration, type RawBuilder, sql } from "kysely";
import { availableFor, hotQueries, toRow } from "./billing-queries.ts";
import type {
  BillingStore,
  HoldInput,
  HoldResult,
  SpendLimitCheck,
  UsageRecord,
} from "./billing-types.ts";
import { newId } from "./ids.ts";
import { queryTemplate } from "./query-template.ts";
import type { Database, UsageRecordsTable } from "./schema.ts";
import { dayOf, keyTreeCte, spendUpsert } from "./spend-by-day.ts";
import { checkSpendLimits } from "./spend-limits.ts";
import { refusedByCap } from "./sql-billing.ts";
import type { TransactionRunner, TransactionSteps } from "./transactions.ts";

/** The columns of a usage record, in the order they are written, with their SQL types. */
const USAGE_COLUMNS = {
  request_id: "text",
  account_id: "text",
  key_id: "text",
  model: "text",
  endpoint: "text",
  status: "text",
  input_tokens: "bigint",
  cached_input_tokens: "bigint",
  cache_write_tokens: "bigint",
  output_tokens: "bigint",
  reasoning_tokens: "bigint",
  images: "bigint",
  video_seconds: "bigint",
  characters: "bigint",
  cost_micros: "bigint",
  held_micros: "bigint",
  usage_source: "text",
  upstream_request_id: "text",
  latency_ms: "bigint",
  ttfb_ms: "bigint",
  breakdown: "text",
  created_at: "bigint",
  overrun_micros: "bigint",
  output_cap_lowered_to: "bigint",
  end_user: "text",
  metadata: "text",
} as const satisfies Record<keyof UsageRecordsTable, "text" | "bigint">;

type UsageColumn = keyof typeof USAGE_COLUMNS;

const typed = (value: unknown, type: "text" | "bigint") => sql`cast(${value} as ${sql.raw(type)})`;

type PgHoldArgs = Pick<
  HoldInput,
  "requestId" | "accountId" | "keyId" | "model" | "endpoint" | "instanceId"
> & { ledgerId: string; amount: number; now: number };

interface PgClosingArgs {
  /** The usage record, its `held_micros` ignored: it is the hold the statement finds. */
  usage: UsageRecordsTable;
  ledgerId: string;
  kind: "charge" | "release";
  /** The closing ledger row's reason (a release's). */
  reason: string | null;
  /** The closing ledger row's time. */
  now: number;
}

type ClosingTemplateArgs = UsageRecordsTable & {
  ledger_id: string;
  ledger_kind: string;
  ledger_reason: string | null;
  ledger_at: number;
  spend_day: number;
};

export function pgBillingStatements(db: Kysely<Database>) {
  const hold = queryTemplate((a: PgHoldArgs) => ({
    compile: () =>
      sql`with reserved as (
          update accounts set held_micros = held_micros + ${typed(a.amount, "bigint")}
          where id = ${a.accountId}
            and balance_micros - held_micros >= ${typed(a.amount, "bigint")}
          returning id
        ), hold as (
          insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros,
            request_id, key_id, model, breakdown, reason, created_at)
          select ${typed(a.ledgerId, "text")}, reserved.id, 'hold', 0, ${typed(a.amount, "bigint")},
            ${typed(a.requestId, "text")}, ${typed(a.keyId, "text")}, ${typed(a.model, "text")},
            null, null, ${typed(a.now, "bigint")}
          from reserved
        ), inflight as (
          insert into inflight_requests (request_id, account_id, key_id, model, endpoint,
            instance_id, hold_micros, floor_micros, checkpoint_micros, checkpoint_usage,
            created_at, updated_at)
          select ${typed(a.requestId, "text")}, reserved.id, ${typed(a.keyId, "text")},
            ${typed(a.model, "text")}, ${typed(a.endpoint, "text")}, ${typed(a.instanceId, "text")},
            ${typed(a.amount, "bigint")}, 0, 0, null, ${typed(a.now, "bigint")},
            ${typed(a.now, "bigint")}
          from reserved
        )
        select count(*) as placed from reserved`.compile(db),
  }));

  const closing = queryTemplate((a: ClosingTemplateArgs) => {
    const columns = Object.keys(USAGE_COLUMNS) as UsageColumn[];
    const usageValues = columns.map(
      (column): RawBuilder<unknown> =>
        column === "held_micros"
          ? sql`-closing.hold_micros`
          : typed(a[column], USAGE_COLUMNS[column]),
    );
    const cost = typed(a.cost_micros, "bigint");
    return {
      compile: () =>
        sql`with recursive found as (
            select coalesce(sum(case when kind = 'hold' then hold_micros else 0 end), 0) as held,
              count(case when kind in ('charge', 'release') then 1 end) as closings
            from ledger_entries where request_id = ${a.request_id}
          ), closing as (
            insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros,
              request_id, key_id, model, breakdown, reason, created_at)
            select ${typed(a.ledger_id, "text")}, ${typed(a.account_id, "text")},
              ${typed(a.ledger_kind, "text")}, -${cost}, -found.held,
              ${typed(a.request_id, "text")}, ${typed(a.key_id, "text")},
              ${typed(a.model, "text")}, ${typed(a.breakdown, "text")},
              ${typed(a.ledger_reason, "text")}, ${typed(a.ledger_at, "bigint")}
            from found where found.closings = 0
            on conflict do nothing
            returning hold_micros
          ), gone as (
            delete from inflight_requests
            where request_id = ${a.request_id} and exists (select 1 from closing)
          ), account as (
            update accounts set balance_micros = balance_micros - ${cost},
              held_micros = held_micros + closing.hold_micros
            from closing
            where accounts.id = ${a.account_id}
              and (closing.hold_micros <> 0 or ${cost} <> 0)
          ), usage as (
            insert into usage_records (${sql.join(columns.map((column) => sql.ref(column)))})
            select ${sql.join(usageValues)} from closing
          ), ${keyTreeCte(a.key_id)}, spend as (
            ${spendUpsert(
              { accountId: a.account_id, day: a.spend_day, cost: a.cost_micros },
              sql`${cost} > 0 and exists (select 1 from closing)`,
            )}
          )
          select count(*) as closed, (select id from ledger_entries
              where request_id = ${a.request_id} and kind in ('charge', 'release')
              limit 1) as closed_by
          from closing`.compile(db),
    };
  });

  return {
    /** Reserves `amount` and writes the hold's ledger and in-flight rows, or refuses. */
    hold,
    /** Closes a request (a charge or a release); `closed` is 0 if it was closed already. */
    close(args: PgClosingArgs): CompiledQuery {
      return closing({
        ...args.usage,
        ledger_id: args.ledgerId,
        ledger_kind: args.kind,
        ledger_reason: args.reason,
        ledger_at: args.now,
        spend_day: dayOf(args.usage.created_at),
      });
    },
  };
}

/**
 * The billing store's hot methods on PostgreSQL, one round trip each; a hold under spend caps
 * is a transaction (the account row locked, the caps read, then the hold statement).
 */
export function pgBillingStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): Pick<BillingStore, "placeHold" | "settle" | "releaseHold" | "recordInflight"> {
  const statements = pgBillingStatements(db);
  const q = hotQueries(db);
  /**
   * Writes the closing; `closed` is false when the request was closed already, and `closedBy`
   * then names that closing's ledger row (the statement's reads see the table as it was before
   * its own insert).
   */
  const close = async (record: UsageRecord, kind: "charge" | "release", reason: string | null) => {
    record.closingId ??= newId("led");
    const { rows } = await db.executeQuery<{ closed: unknown; closed_by: unknown }>(
      statements.close({
        usage: toRow(record),
        ledgerId: record.closingId,
        kind,
        reason,
        now: Date.now(),
      }),
    );
    return {
      closed: Number(rows[0]?.closed ?? 0) > 0,
      closedBy: typeof rows[0]?.closed_by === "string" ? rows[0].closed_by : undefined,
    };
  };
  /**
   * A hold under spend caps, once the caps' reads found room. Made once, not per call: V8 keeps a
   * generator function made per call, and all it closes over, until its next full collection.
   */
  function* placeUnderCaps(
    accountId: string,
    amountMicros: number,
    limits: readonly SpendLimitCheck[],
    hold: () => CompiledQuery,
  ): TransactionSteps<HoldResult> {
    const capped = yield* checkSpendLimits(
      db,
      { accountId, amountMicros, limits, lockAccount: true },
      undefined,
    );
    if (capped) return refusedByCap(capped);
    const [placed] = yield hold();
    if (Number(placed?.placed ?? 0) > 0) return { placed: true as const };
    return {
      placed: false as const,
      availableMicros: yield* availableFor(q, accountId, undefined),
    };
  }
  return {
    async placeHold(input) {
      const { accountId, amountMicros } = input;
      const limits = input.spendLimits ?? [];
      const hold = () =>
        statements.hold({
          ledgerId: newId("led"),
          requestId: input.requestId,
          accountId,
          keyId: input.keyId,
          model: input.model,
          endpoint: input.endpoint,
          instanceId: input.instanceId,
          amount: amountMicros,
          now: Date.now(),
        });
      // Refused: what is available is read again (the statement's own reads see the account as
      // it was when the statement began, before a concurrent hold that it waited for).
      if (limits.length === 0) {
        const { rows } = await db.executeQuery<{ placed: unknown }>(hold());
        if (Number(rows[0]?.placed ?? 0) > 0) return { placed: true };
        const [account] = (await db.executeQuery(q.available({ accountId }))).rows as Array<{
          balance_micros: unknown;
          held_micros: unknown;
        }>;
        const availableMicros = account
          ? Number(account.balance_micros) - Number(account.held_micros)
          : 0;
        return { placed: false, availableMicros };
      }
      // Spend caps: a transaction that locks the account row first, so that the caps' reads see
      // every hold of the account placed before (spend-limits.ts), then the hold statement.
      return transactions.run(() => placeUnderCaps(accountId, amountMicros, limits, hold));
    },
    async settle(record) {
      const { closed, closedBy } = await close(record, "charge", null);
      return { alreadySettled: !closed, ownClosing: closed || closedBy === record.closingId };
    },
    async releaseHold(record, reason) {
      await close({ ...record, costMicros: 0 }, "release", reason);
    },
    async recordInflight(requestId, floorMicros) {
      await db.executeQuery(q.deliverInflight({ requestId, floor: floorMicros }));
    },
  };
}

/** Migration 0015, PostgreSQL only: one closing (charge or release) ledger row per request. */
export function oneClosingMigration(dialect: "sqlite" | "postgres"): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== "postgres") return;
      // A request closed twice (the race this index prevents) would make the index fail with a
      // bare "could not create unique index"; say which requests instead.
      const { rows } = await sql<{ request_id: string }>`select request_id from ledger_entries
        where kind in ('charge', 'release') and request_id is not null
        group by request_id having count(*) > 1 limit 10`.execute(db);
      if (rows.length > 0)
        throw new Error(
          `migration 0015: requests closed more than once in the ledger (${rows
            .map((row) => row.request_id)
            .join(", ")}); each returned its hold twice. Run "switchyard ledger verify", correct ` +
            "the accounts named (a credit or debit with a reason), remove the duplicate closing " +
            "rows, and start again.",
        );
      await sql`create unique index ledger_request_closing on ledger_entries (request_id)
        where kind in ('charge', 'release')`.execute(db);
    },
  };
}
