/**
 * @module cli/manage
 * Account, key and ledger management commands, run against the configured database.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../config/index.ts";
import { createAccount, describeAccount } from "../endpoints/account/accounts.ts";
import { describeKey, issueKey } from "../endpoints/account/issue-key.ts";
import { openStore, type Store } from "../store/index.ts";

type Out = (line: string) => void;

async function withStore<T>(run: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig().database_url);
  try {
    return await run(store);
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

export async function runAccountsCommand(args: string[], out: Out): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
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
  return withStore(async (store) => {
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
          balanceMicros: values["balance-micros"] ? Number(values["balance-micros"]) : undefined,
          reason: "opening balance (cli)",
        });
        json(out, describeAccount(account));
        return 0;
      }
      case "credit": {
        const amount = Number(values["amount-micros"]);
        if (!positionals[0] || !Number.isSafeInteger(amount) || amount === 0 || !values.reason) {
          throw usage("accounts credit <id> needs --amount-micros (non-zero integer) and --reason");
        }
        const result = await store.adjustBalance({
          accountId: positionals[0],
          amountMicros: amount,
          reason: `${values.reason} (cli)`,
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
  return withStore(async (store) => {
    switch (action) {
      case "list":
        if (!values.account) throw usage("keys list needs --account");
        json(out, (await store.listKeys(values.account)).map(describeKey));
        return 0;
      case "create": {
        if (!values.account || !(await store.findAccountById(values.account)))
          throw usage("keys create needs --account <existing id>");
        const { key, record } = await issueKey(store, values.account, {
          name: values.name,
          models: values.models ? values.models.split(",").map((model) => model.trim()) : [],
          rpm: values.rpm ? Number(values.rpm) : null,
          concurrency: values.concurrency ? Number(values.concurrency) : null,
          expires_at: values["expires-at"] ?? null,
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
    const result = await store.verify();
    if (result.mismatches.length === 0) {
      out(`ledger ok: ${result.accounts} accounts, every balance equals the sum of its ledger`);
      return 0;
    }
    for (const mismatch of result.mismatches) {
      out(
        `MISMATCH ${mismatch.accountId}: balance ${mismatch.balance} != ledger ${mismatch.ledgerSum}`,
      );
    }
    return 1;
  });
}
