/**
 * @module store/ledger-verify
 * `ledger verify`: every account's balance and held amount against the sums of its ledger, no
 * balance or held amount below zero, no more held than the balance, no charge above the hold it
 * settled and none that adds money, every stored
 * amount a safe integer, and the spend day rows equal to the usage records they sum. Sums are compared as BigInts and whatever the database holds — values
 * past 2^53, an SQLite sum that overflows, amounts stored as reals — ends as a reported problem,
 * never as an exception.
 */
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Database } from "./schema.ts";
import { spendRowDifferences } from "./spend-by-day.ts";
import type { LedgerProblem, LedgerReport } from "./types.ts";

/** Rows read per page when the sums must be made here rather than by the database. */
const PAGE = 5_000;
/** Charges above their hold listed one by one; the rest are counted. */
const MAX_CHARGES_LISTED = 100;

const MAX_SAFE_NUMBER = Number.MAX_SAFE_INTEGER;
const MAX_SAFE = BigInt(MAX_SAFE_NUMBER);

/** A stored amount as a BigInt, or undefined when it is not an integer (a real, text). */
function exact(value: unknown): bigint | undefined {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : undefined;
  if (typeof value === "string" && /^-?\d{1,40}$/.test(value)) return BigInt(value);
  return undefined;
}

const safe = (value: bigint | undefined): value is bigint =>
  value !== undefined && value <= MAX_SAFE && value >= -MAX_SAFE;

interface Sums {
  amount: bigint;
  hold: bigint;
  entries: number;
  /** An entry whose amount could not be read exactly (then the sums are not trusted). */
  unreadable?: string;
}

/** Per-account sums by the database; undefined when it cannot make them (an overflow). */
async function sumsByDatabase(db: Kysely<Database>): Promise<Map<string, Sums> | undefined> {
  try {
    const rows = await db
      .selectFrom("ledger_entries")
      .select([
        "account_id",
        sql<string>`cast(sum(amount_micros) as text)`.as("amount"),
        sql<string>`cast(sum(hold_micros) as text)`.as("hold"),
        sql<number>`count(*)`.as("entries"),
      ])
      .groupBy("account_id")
      .execute();
    const sums = new Map<string, Sums>();
    for (const row of rows) {
      const amount = exact(row.amount);
      const hold = exact(row.hold);
      // A sum of reals (SQLite keeps an overflowed integer as a real) is checked row by row.
      if (amount === undefined || hold === undefined) return undefined;
      sums.set(row.account_id, { amount, hold, entries: Number(row.entries) });
    }
    // A sum can be in range while its entries are not (+2^60 and −2^60): look for such entries.
    const outOfRange = await db
      .selectFrom("ledger_entries")
      .select([
        "id",
        "account_id",
        sql<string>`cast(amount_micros as text)`.as("amount"),
        sql<string>`cast(hold_micros as text)`.as("hold"),
      ])
      .where((eb) =>
        eb.or([
          eb("amount_micros", ">", MAX_SAFE_NUMBER),
          eb("amount_micros", "<", -MAX_SAFE_NUMBER),
          eb("hold_micros", ">", MAX_SAFE_NUMBER),
          eb("hold_micros", "<", -MAX_SAFE_NUMBER),
        ]),
      )
      .limit(PAGE)
      .execute();
    for (const row of outOfRange) {
      const entry = sums.get(row.account_id);
      if (entry) entry.unreadable ??= `entry ${row.id} holds ${row.amount} / ${row.hold}`;
    }
    return sums;
  } catch {
    return undefined;
  }
}

/** Per-account sums made here, page by page, exact whatever the stored values. */
async function sumsByScan(db: Kysely<Database>): Promise<Map<string, Sums>> {
  const sums = new Map<string, Sums>();
  let after = -1;
  for (;;) {
    const rows = await db
      .selectFrom("ledger_entries")
      .select(["seq", "id", "account_id", "amount_micros", "hold_micros"])
      .where("seq", ">", after)
      .orderBy("seq")
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const entry = sums.get(row.account_id) ?? { amount: 0n, hold: 0n, entries: 0 };
      const amount = exact(row.amount_micros);
      const hold = exact(row.hold_micros);
      entry.entries += 1;
      if (safe(amount) && safe(hold)) {
        entry.amount += amount;
        entry.hold += hold;
      } else {
        entry.unreadable ??= `entry ${row.id} holds ${String(row.amount_micros)} / ${String(row.hold_micros)}`;
      }
      sums.set(row.account_id, entry);
    }
    if (rows.length < PAGE) return sums;
    after = Number(rows[rows.length - 1]?.seq);
  }
}

async function chargesAboveHold(db: Kysely<Database>): Promise<LedgerProblem[]> {
  // Each settled request's usage record holds its charge and the hold it settled (in the table
  // or, on SQLite, in memory), so the rule is checked there on every backend; and the ledger's
  // charge row, which the balance is summed from, against the same hold.
  const rows = await db
    .selectFrom("usage_records")
    .select(["request_id", "account_id", "cost_micros", "held_micros"])
    .where(sql<boolean>`cost_micros > held_micros`)
    .orderBy("created_at")
    .limit(MAX_CHARGES_LISTED + 1)
    .execute();
  const ledgerRows = await db
    .selectFrom("ledger_entries")
    .innerJoin("usage_records", "usage_records.request_id", "ledger_entries.request_id")
    .select([
      "ledger_entries.request_id as request_id",
      "ledger_entries.account_id as account_id",
      sql<number>`-ledger_entries.amount_micros`.as("cost_micros"),
      "usage_records.held_micros as held_micros",
    ])
    .where("ledger_entries.kind", "=", "charge")
    .where(sql<boolean>`-ledger_entries.amount_micros > usage_records.held_micros`)
    .where(sql<boolean>`usage_records.cost_micros <= usage_records.held_micros`)
    .orderBy("ledger_entries.seq")
    .limit(MAX_CHARGES_LISTED + 1)
    .execute();
  const problems: LedgerProblem[] = [...rows, ...ledgerRows]
    .slice(0, MAX_CHARGES_LISTED)
    .map((row) => ({
      kind: "charge_above_hold",
      accountId: row.account_id ?? "*",
      detail: `request ${row.request_id} charged ${Number(row.cost_micros)} against a hold of ${Number(row.held_micros)}`,
    }));
  if (rows.length + ledgerRows.length > MAX_CHARGES_LISTED) {
    problems.push({
      kind: "charge_above_hold",
      accountId: "*",
      detail: `more than ${MAX_CHARGES_LISTED} charges exceed their hold; the first ${MAX_CHARGES_LISTED} are listed`,
    });
  }
  return problems;
}

/** `charge` entries that add money (a charge takes it: its amount is zero or negative). */
async function positiveCharges(db: Kysely<Database>): Promise<LedgerProblem[]> {
  const rows = await db
    .selectFrom("ledger_entries")
    .select([
      "id",
      "account_id",
      "request_id",
      sql<string>`cast(amount_micros as text)`.as("amount"),
    ])
    .where("kind", "=", "charge")
    .where("amount_micros", ">", 0)
    .orderBy("seq")
    .limit(MAX_CHARGES_LISTED)
    .execute();
  return rows.map((row) => ({
    kind: "positive_charge" as const,
    accountId: row.account_id,
    detail: `entry ${row.id} (request ${row.request_id}) charges +${row.amount}`,
  }));
}

/** Spend day rows (spend caps and budgets read them) that disagree with the usage records. */
async function spendRowProblems(db: Kysely<Database>): Promise<LedgerProblem[]> {
  let differences: Awaited<ReturnType<typeof spendRowDifferences>>;
  try {
    differences = await spendRowDifferences(db);
  } catch (error) {
    // Damaged amounts (an SQLite sum that overflows) are reported, never thrown.
    return [
      {
        kind: "out_of_range",
        accountId: "*",
        detail: `the spend day rows could not be compared with the usage records: ${error instanceof Error ? error.message : String(error)}`,
      },
    ];
  }
  if (differences.length === 0) return [];
  const keys = await db.selectFrom("api_keys").select(["id", "account_id"]).execute();
  const accountOf = new Map(keys.map((key) => [key.id, key.account_id]));
  return differences.map(({ ownerId, detail }) => ({
    kind: "spend_rows_mismatch" as const,
    accountId: accountOf.get(ownerId) ?? ownerId,
    detail,
  }));
}

/**
 * Checks the whole ledger in one read snapshot (a transaction; repeatable read on PostgreSQL),
 * so that money moving while it runs is never taken for a mismatch: every figure it compares
 * is of the same moment.
 */
export function verifyLedger(db: Kysely<Database>): Promise<LedgerReport> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute((snapshot) => verifyInSnapshot(snapshot));
}

async function verifyInSnapshot(db: Kysely<Database>): Promise<LedgerReport> {
  const accounts = await db
    .selectFrom("accounts")
    .select(["id", "balance_micros", "held_micros"])
    .orderBy("id")
    .execute();
  const sums = (await sumsByDatabase(db)) ?? (await sumsByScan(db));
  const problems: LedgerProblem[] = [];
  let entries = 0;
  for (const account of accounts) {
    const sum = sums.get(account.id) ?? { amount: 0n, hold: 0n, entries: 0 };
    entries += sum.entries;
    const balance = exact(account.balance_micros);
    const held = exact(account.held_micros);
    const report = (kind: LedgerProblem["kind"], detail: string) =>
      problems.push({ kind, accountId: account.id, detail });
    if (!safe(balance) || !safe(held)) {
      report(
        "out_of_range",
        `balance ${String(account.balance_micros)}, held ${String(account.held_micros)}: not integers within ±(2^53 − 1)`,
      );
      continue;
    }
    if (sum.unreadable) {
      report("out_of_range", sum.unreadable);
      continue;
    }
    if (balance !== sum.amount)
      report("balance_mismatch", `balance ${balance} != ledger ${sum.amount}`);
    if (held !== sum.hold) report("held_mismatch", `held ${held} != ledger holds ${sum.hold}`);
    if (balance < 0n) report("negative_balance", `balance ${balance}`);
    if (held < 0n) report("negative_held", `held ${held}`);
    if (held > balance && balance >= 0n)
      report("held_above_balance", `held ${held} > balance ${balance}`);
  }
  problems.push(...(await chargesAboveHold(db)));
  problems.push(...(await positiveCharges(db)));
  problems.push(...(await spendRowProblems(db)));
  return { accounts: accounts.length, entries, problems };
}
