/**
 * @module cli/format
 * What the management commands print: the HTTP API's objects as JSON with `--json`, otherwise a
 * few lines of text or a table for people.
 */
import type { describeAccount } from "../endpoints/account/accounts.ts";
import type { describeKey } from "../endpoints/account/issue-key.ts";

export type Out = (line: string) => void;
export type AccountJson = ReturnType<typeof describeAccount>;
export type KeyJson = ReturnType<typeof describeKey>;

/** Columns padded to their widest cell; the first row is the header. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? "").length)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) =>
        column === row.length - 1 ? cell : cell.padEnd(widths?.[column] ?? 0),
      )
      .join("  "),
  );
}

const usd = (micros: number) => `${(micros / 1_000_000).toFixed(6)} USD`;

export function printAccounts(out: Out, accounts: AccountJson[]): void {
  if (accounts.length === 0) {
    out("No accounts.");
    return;
  }
  const rows = accounts.map((account) => [
    account.id,
    account.email,
    account.suspended_at ? `${account.role} (suspended)` : account.role,
    account.balance_usd,
    account.created_at,
  ]);
  for (const line of table([["ID", "EMAIL", "ROLE", "BALANCE_USD", "CREATED"], ...rows])) out(line);
}

export function printAccount(out: Out, account: AccountJson): void {
  out(
    `Created account ${account.id} (${account.email}, ${account.role}); balance ${usd(account.balance_micros)}.`,
  );
}

export function printLedgerEntry(
  out: Out,
  entry: {
    id: string;
    account_id: string;
    amount_micros: number;
    balance_micros: number;
    replayed?: boolean;
  },
): void {
  const verb = entry.amount_micros < 0 ? "Debited" : "Credited";
  const done = `${verb} ${usd(Math.abs(entry.amount_micros))} ${entry.amount_micros < 0 ? "from" : "to"} ${entry.account_id} (ledger entry ${entry.id})`;
  out(
    entry.replayed
      ? `Already done with this idempotency key: ${done}; nothing changed. Balance ${usd(entry.balance_micros)}.`
      : `${done}; balance ${usd(entry.balance_micros)}.`,
  );
}

function keyStatus(key: KeyJson, now: number): string {
  if (key.revoked) return "revoked";
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

export function printKeys(out: Out, keys: KeyJson[]): void {
  if (keys.length === 0) {
    out("No keys.");
    return;
  }
  const now = Date.now();
  const rows = keys.map((key) => [
    key.id,
    key.name,
    key.prefix,
    keyStatus(key, now),
    key.models.length > 0 ? key.models.join(",") : "all",
    key.created_at,
  ]);
  for (const line of table([["ID", "NAME", "PREFIX", "STATUS", "MODELS", "CREATED"], ...rows]))
    out(line);
}

export function printNewKey(out: Out, key: KeyJson & { key: string }): void {
  const models = key.models.length > 0 ? key.models.join(", ") : "all models";
  out(`Created key ${key.id} '${key.name}' for ${key.account_id} (${models}).`);
  out("The key, shown this once:");
  out(key.key);
}

export function printRevokedKey(out: Out, key: KeyJson): void {
  out(`Revoked key ${key.id} '${key.name}' (${key.prefix}) of ${key.account_id}.`);
}
