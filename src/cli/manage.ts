/**
 * @module cli/manage
 * Account, key and ledger management commands, run against the configured database. Input is
 * checked with the HTTP API's own schemas and rules (an email `POST /v1/admin/accounts` refuses
 * is refused here too); a missing account or key exits 3. `--json` prints the API's objects.
 * Every change is recorded in the audit trail with the actor `cli`.
 */
import { parseArgs } from "node:util";
import { adjustBalance } from "../billing/index.ts";
import { Catalog, loadCatalogData } from "../catalog/index.ts";
import { type Config, loadConfig } from "../config/index.ts";
import { readIdempotencyKey } from "../core/idempotency-key.ts";
import { compileValidator } from "../core/validate.ts";
import { createAccount, describeAccount, NewAccountBody } from "../endpoints/account/accounts.ts";
import {
  describeKey,
  issueKey,
  KeyOptions,
  resolveKeyModels,
} from "../endpoints/account/issue-key.ts";
import { openStoreWhenReachable } from "../ops/open-store.ts";
import {
  type AuditOrigin,
  describeDatabaseUrl,
  type Store,
  sqliteFileOwner,
} from "../store/index.ts";
import { CliError, EXIT, notFound, usage } from "./exit.ts";
import {
  type Out,
  printAccount,
  printAccounts,
  printKeys,
  printLedgerEntry,
  printNewKey,
  printRevokedKey,
} from "./format.ts";

/** The longest `--reason`, as the HTTP API's `reason`. */
const MAX_REASON_LENGTH = 500;

/**
 * A debit next to a running SQLite gateway: that gateway keeps its requests' holds in memory,
 * so this process cannot keep the balance above them. The admin API can.
 */
function refuseDebitBesideGateway(config: Config, amount: number): void {
  if (amount > 0) return;
  const database = describeDatabaseUrl(config.database_url);
  if (database.dialect !== "sqlite") return;
  const pid = sqliteFileOwner(database.location);
  if (pid === undefined) return;
  throw new CliError(
    `A gateway (pid ${pid}) serves ${database.location} and holds its requests' money in memory, so a debit from here could take what they hold. Debit through the admin API instead: POST /v1/admin/accounts/{id}/credit with a negative amount_micros.`,
    EXIT.failure,
  );
}

/** The audit trail's actor for a change made from the command line. */
const CLI_ORIGIN: AuditOrigin = { actor: { type: "cli" } };

const validateNewAccount = compileValidator(NewAccountBody);
const validateKeyOptions = compileValidator(KeyOptions);

export async function withStore<T>(run: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // No waiting: a command against a database that is down says so at once.
  const store = await openStoreWhenReachable(config.database_url, { waitSeconds: 0 });
  try {
    return await run(store, config);
  } finally {
    await store.close();
  }
}

/** The JSON object with `--json`, otherwise the text `print` makes of it. */
function emit<T>(
  out: Out,
  asJson: boolean | undefined,
  value: T,
  print: (out: Out, value: T) => void,
) {
  if (asJson) out(JSON.stringify(value, null, 2));
  else print(out, value);
}

/** Drops absent options, so the schema sees only what was given. */
function given<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(input).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * `parseArgs` takes `--amount-micros -1000000` for an option without a value; join a negative
 * number onto the option before it (`--amount-micros=-1000000`) so debits work as documented.
 */
function joinNegativeNumbers(args: string[], options: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (options.includes(arg) && next !== undefined && /^-\d+$/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** An integer option (`undefined` when absent); anything but an integer >= min is a usage error. */
function integerOption(
  values: Record<string, string | boolean | undefined>,
  name: string,
  min: number,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw usage(`--${name} must be an integer >= ${min}, got '${String(raw)}'`);
  }
  return value;
}

/** Checks a key's model allowlist against the catalog, as the HTTP API does. */
function resolveModels(config: Config, list: string | undefined): string[] {
  if (!list) return [];
  const catalog = new Catalog(
    loadCatalogData({
      extraFiles: config.catalog.files,
      extraVendors: config.catalog.vendors,
      extraModels: config.catalog.models,
    }),
    { env: process.env, sandboxMode: config.sandbox.mode },
  );
  const ids = list
    .split(",")
    .map((model) => model.trim())
    .filter((model) => model !== "");
  return resolveKeyModels(catalog, ids) ?? [];
}

async function requireAccount(store: Store, id: string | undefined, command: string) {
  if (!id) throw usage(`${command} needs --account <account-id>`);
  const account = await store.findAccountById(id);
  if (!account) throw notFound(`No account '${id}'.`);
  return account;
}

/**
 * Refuses arguments a command does not take: `keys revoke key_a key_b` revoking key_a alone (and
 * exiting 0) would leave the second leaked key working.
 */
function refuseExtraArguments(command: string, positionals: string[], takes: number): void {
  if (positionals.length <= takes) return;
  const extra = positionals.slice(takes).join(" ");
  throw usage(
    takes === 0
      ? `${command} takes no arguments, got '${extra}'`
      : `${command} takes one id, got also '${extra}' (run it once per id)`,
  );
}

/** `--idempotency-key`, checked as the API checks its header (a usage error otherwise). */
function cliIdempotencyKey(value: string | undefined): string | null {
  try {
    return readIdempotencyKey({ "idempotency-key": value });
  } catch {
    throw usage("--idempotency-key is at most 255 printable characters without spaces");
  }
}

export async function runAccountsCommand(args: string[], out: Out): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: joinNegativeNumbers(rest, ["--amount-micros"]),
    allowPositionals: true,
    options: {
      email: { type: "string" },
      password: { type: "string" },
      admin: { type: "boolean" },
      "balance-micros": { type: "string" },
      "amount-micros": { type: "string" },
      reason: { type: "string" },
      "idempotency-key": { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (!["list", "create", "credit"].includes(action ?? ""))
    throw usage("accounts takes list, create or credit");
  refuseExtraArguments(`accounts ${action}`, positionals, action === "credit" ? 1 : 0);
  if (action === "create" && !values.email) throw usage("accounts create needs --email");
  // Checked before the database is opened, with the API's schema: the same email rule.
  const newAccount =
    action === "create"
      ? validateNewAccount(
          given({
            email: values.email,
            password: values.password,
            role: values.admin ? "admin" : undefined,
            balance_micros: integerOption(values, "balance-micros", 0),
          }),
        )
      : undefined;
  return withStore(async (store, config) => {
    switch (action) {
      case "list": {
        const accounts = await store.listAccounts({ limit: 1000, offset: 0 });
        emit(out, values.json, accounts.map(describeAccount), printAccounts);
        return 0;
      }
      case "create": {
        const body = newAccount as NonNullable<typeof newAccount>;
        const account = await createAccount(store, {
          email: body.email,
          password: body.password,
          role: body.role ?? "user",
          balanceMicros: body.balance_micros,
          reason: "opening balance (cli)",
          maxBalanceMicros: config.billing.max_balance_micros,
          audit: CLI_ORIGIN,
        });
        emit(out, values.json, describeAccount(account), printAccount);
        return 0;
      }
      default: {
        // Digits only, as the HTTP API takes them: no hex (0x10), exponent (1e3) or fraction.
        const raw = values["amount-micros"] ?? "";
        const amount = /^-?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
        if (!positionals[0] || !Number.isSafeInteger(amount) || amount === 0 || !values.reason) {
          throw usage("accounts credit <id> needs --amount-micros (non-zero integer) and --reason");
        }
        if (values.reason.length > MAX_REASON_LENGTH)
          throw usage(`--reason is at most ${MAX_REASON_LENGTH} characters`);
        const idempotencyKey = cliIdempotencyKey(values["idempotency-key"]);
        const account = await store.findAccountById(positionals[0]);
        if (!account) throw notFound(`No account '${positionals[0]}'.`);
        refuseDebitBesideGateway(config, amount);
        const result = await adjustBalance(store, {
          accountId: account.id,
          amountMicros: amount,
          reason: `${values.reason} (cli)`,
          maxBalanceMicros: config.billing.max_balance_micros,
          audit: { ...CLI_ORIGIN, reason: values.reason },
          ...(idempotencyKey === null ? {} : { idempotencyKey }),
        });
        emit(
          out,
          values.json,
          {
            id: result.entry.id,
            account_id: account.id,
            kind: result.entry.kind,
            amount_micros: amount,
            balance_micros: result.balanceMicros,
            replayed: result.replayed,
          },
          printLedgerEntry,
        );
        return 0;
      }
    }
  });
}

export async function runKeysCommand(args: string[], out: Out): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      account: { type: "string" },
      name: { type: "string" },
      models: { type: "string" },
      rpm: { type: "string" },
      concurrency: { type: "string" },
      "expires-at": { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (!["list", "create", "revoke"].includes(action ?? ""))
    throw usage("keys takes list, create or revoke");
  refuseExtraArguments(`keys ${action}`, positionals, action === "revoke" ? 1 : 0);
  if (action === "revoke" && !positionals[0]) throw usage("keys revoke <key-id>");
  return withStore(async (store, config) => {
    switch (action) {
      case "list": {
        const account = await requireAccount(store, values.account, "keys list");
        emit(out, values.json, (await store.listKeys(account.id)).map(describeKey), printKeys);
        return 0;
      }
      case "create": {
        const account = await requireAccount(store, values.account, "keys create");
        const options = validateKeyOptions(
          given({
            name: values.name,
            models: resolveModels(config, values.models),
            rpm: integerOption(values, "rpm", 1),
            concurrency: integerOption(values, "concurrency", 1),
            expires_at: values["expires-at"],
          }),
        );
        const { key, record } = await issueKey(store, account.id, options, undefined, CLI_ORIGIN);
        emit(out, values.json, { ...describeKey(record), key }, printNewKey);
        return 0;
      }
      default: {
        const id = positionals[0] as string;
        const revoked = await store.revokeKey(id, Date.now(), CLI_ORIGIN);
        if (!revoked) throw notFound(`No key '${id}'.`);
        emit(out, values.json, describeKey(revoked), printRevokedKey);
        return 0;
      }
    }
  });
}

export async function runLedgerCommand(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: "boolean" } },
  });
  if (positionals.length !== 1 || positionals[0] !== "verify") throw usage("ledger takes verify");
  return withStore(async (store) => {
    const report = await store.verify();
    const ok = report.problems.length === 0;
    if (values.json) {
      out(JSON.stringify({ ok, ...report }, null, 2));
      return ok ? 0 : 1;
    }
    if (ok) {
      out(
        `ledger ok: ${report.accounts} accounts, ${report.entries} entries; every balance and held amount equals the sum of its ledger, none is negative, no charge exceeds its hold`,
      );
      return 0;
    }
    for (const problem of report.problems)
      out(`PROBLEM ${problem.kind} ${problem.accountId}: ${problem.detail}`);
    out(
      `ledger NOT ok: ${report.problems.length} problems in ${report.accounts} accounts, ${report.entries} entries`,
    );
    return 1;
  });
}
