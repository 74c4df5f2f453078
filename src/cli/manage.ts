/**
 * @module cli/manage
 * Account, key and ledger management commands, run against the configured database.
 */
import { parseArgs } from "node:util";
import { adjustBalance } from "../billing/index.ts";
import { Catalog, loadCatalogData } from "../catalog/index.ts";
import { type Config, loadConfig } from "../config/index.ts";
import { createAccount, describeAccount } from "../endpoints/account/accounts.ts";
import { describeKey, issueKey, resolveKeyModels } from "../endpoints/account/issue-key.ts";
import { GatewayError } from "../errors/index.ts";
import { openStore, type Store } from "../store/index.ts";

type Out = (line: string) => void;

async function withStore<T>(run: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.database_url);
  try {
    return await run(store, config);
  } finally {
    await store.close();
  }
}

function json(out: Out, value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

function usage(message: string): Error {
  return Object.assign(new Error(message), { code: "ERR_PARSE_ARGS_USAGE" });
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
  try {
    return resolveKeyModels(catalog, ids) ?? [];
  } catch (error) {
    if (error instanceof GatewayError) throw usage(`--models: ${error.message}`);
    throw error;
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
    },
  });
  return withStore(async (store, config) => {
    switch (action) {
      case "list":
        json(out, (await store.listAccounts({ limit: 1000, offset: 0 })).map(describeAccount));
        return 0;
      case "create": {
        if (!values.email) throw usage("accounts create needs --email");
        const account = await createAccount(store, {
          email: values.email,
          password: values.password,
          role: values.admin ? "admin" : "user",
          balanceMicros: integerOption(values, "balance-micros", 0),
          reason: "opening balance (cli)",
          maxBalanceMicros: config.billing.max_balance_micros,
        });
        json(out, describeAccount(account));
        return 0;
      }
      case "credit": {
        const amount = Number(values["amount-micros"]);
        if (!positionals[0] || !Number.isSafeInteger(amount) || amount === 0 || !values.reason) {
          throw usage("accounts credit <id> needs --amount-micros (non-zero integer) and --reason");
        }
        const result = await adjustBalance(store, {
          accountId: positionals[0],
          amountMicros: amount,
          reason: `${values.reason} (cli)`,
          maxBalanceMicros: config.billing.max_balance_micros,
        });
        json(out, {
          id: result.entry.id,
          kind: result.entry.kind,
          amount_micros: amount,
          balance_micros: result.balanceMicros,
        });
        return 0;
      }
      default:
        throw usage("accounts takes list, create or credit");
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
    },
  });
  return withStore(async (store, config) => {
    switch (action) {
      case "list":
        if (!values.account) throw usage("keys list needs --account");
        json(out, (await store.listKeys(values.account)).map(describeKey));
        return 0;
      case "create": {
        if (!values.account || !(await store.findAccountById(values.account)))
          throw usage("keys create needs --account <existing id>");
        const expiresAt = values["expires-at"];
        if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) {
          throw usage(`--expires-at must be an ISO 8601 time, got '${expiresAt}'`);
        }
        const { key, record } = await issueKey(store, values.account, {
          name: values.name,
          models: resolveModels(config, values.models),
          rpm: integerOption(values, "rpm", 1) ?? null,
          concurrency: integerOption(values, "concurrency", 1) ?? null,
          expires_at: expiresAt ?? null,
        });
        json(out, { ...describeKey(record), key });
        return 0;
      }
      case "revoke": {
        if (!positionals[0]) throw usage("keys revoke <key-id>");
        const revoked = await store.revokeKey(positionals[0], Date.now());
        if (!revoked) throw usage(`no key ${positionals[0]}`);
        json(out, describeKey(revoked));
        return 0;
      }
      default:
        throw usage("keys takes list, create or revoke");
    }
  });
}

export async function runLedgerCommand(args: string[], out: Out): Promise<number> {
  if (args[0] !== "verify") throw usage("ledger takes verify");
  return withStore(async (store) => {
    const report = await store.verify();
    if (report.problems.length === 0) {
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
