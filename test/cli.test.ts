/**
 * The `switchyard` management commands, run as real processes against a SQLite file.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  CLI_PATH,
  cleanEnv,
  killLeftovers,
  makeTempDir,
  parseJsonOutput,
  REPO_ROOT,
  removeTempDirs,
  runCli,
  startGatewayProcess,
} from "./support/cli-process.ts";
import { startTestGateway } from "./support/gateway-harness.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

interface AccountJson {
  id: string;
  object: string;
  email: string;
  role: string;
  balance_micros: number;
}

interface KeyJson {
  id: string;
  object: string;
  name: string;
  prefix: string;
  account_id: string;
  models: string[];
  revoked: boolean;
  revoked_at: string | null;
  key?: string;
}

const COMMANDS = ["start", "sandbox", "accounts", "keys", "ledger", "audit"];

/** Runs `run` over `items`, a few processes at a time (each is a Node process of its own). */
async function inBatches<T, R>(items: T[], run: (item: T) => Promise<R>, size = 4): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size)
    results.push(...(await Promise.all(items.slice(start, start + size).map(run))));
  return results;
}

describe("switchyard --help and unknown commands", { timeout: 120_000 }, () => {
  const cwd = makeTempDir("switchyard-cli-help-");

  it("prints the usage with every command and exits 0", async () => {
    for (const result of await Promise.all(
      ["--help", "-h"].map((flag) => runCli([flag], { cwd })),
    )) {
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: switchyard <command>/m);
      for (const command of COMMANDS)
        expect(result.stdout).toMatch(new RegExp(`^ +${command} `, "m"));
    }
  });

  it("exits 2 with the usage on stderr for an unknown command", async () => {
    const result = await runCli(["frobnicate"], { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Unknown command 'frobnicate'");
    expect(result.stderr).toMatch(/^Usage: switchyard <command>/m);
  });

  it("prints the version from package.json with --version and -v", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const result = await runCli([flag], { cwd });
      expect({ flag, code: result.code, stdout: result.stdout }).toEqual({
        flag,
        code: 0,
        stdout: `switchyard ${version}\n`,
      });
    }
  });

  it("prints each command's own usage with --help and exits 0, starting nothing", async () => {
    const dir = makeTempDir("switchyard-cli-command-help-");
    const asks = [
      ["start", "--help"],
      ["start", "-h"],
      ["sandbox", "--help"],
      ["accounts", "--help"],
      ["accounts", "create", "--help"],
      ["keys", "create", "--account", "x", "--help"],
      ["ledger", "verify", "--help"],
      ["audit", "--help"],
      ["help", "keys"],
    ];
    const results = await inBatches(asks, (args) => runCli(args, { cwd: dir }));
    for (const [index, result] of results.entries()) {
      const args = asks[index] as string[];
      const command = args[0] === "help" ? args[1] : args[0];
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 0,
        stderr: "",
      });
      expect(result.stdout).toMatch(new RegExp(`^ *(Usage: )?switchyard ${command}`, "m"));
      expect(result.stdout).not.toMatch(/listening on/);
    }
    // Nothing ran: no database was created in the working directory.
    expect(readdirSync(dir)).toEqual([]);
  });

  it("exits 2 naming the value for a DATABASE_URL with an unknown scheme, creating nothing", async () => {
    const dir = makeTempDir("switchyard-cli-bad-url-");
    for (const url of ["postgress://x", "mysql://user:secret@db/switchyard"]) {
      for (const args of [["start"], ["accounts", "list"]]) {
        const result = await runCli(args, {
          cwd: dir,
          env: cleanEnv({ DATABASE_URL: url, PORT: "0" }),
        });
        expect({ url, args, code: result.code }).toEqual({ url, args, code: 2 });
        expect(result.stderr).toContain("database_url");
        expect(result.stderr).toContain("DATABASE_URL");
        expect(result.stderr).toContain(url.replace(":secret@", ":***@"));
        expect(result.stderr).not.toContain("secret");
        expect(result.stdout).not.toMatch(/listening on|sk-/);
      }
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("runs from the checkout with npx", async () => {
    // yes=false and offline: npx must use this checkout's own bin, never fetch a package.
    const result = await runCli(["switchyard", "--help"], {
      cwd: REPO_ROOT,
      command: ["npx"],
      env: cleanEnv({ npm_config_yes: "false", npm_config_offline: "true" }),
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: switchyard <command>/m);
  });
});

// Each command is a process of its own (about a second each): generous timeouts for busy hosts.
describe("accounts, keys and ledger against a SQLite file", { timeout: 180_000 }, () => {
  const cwd = makeTempDir("switchyard-cli-db-");
  const env = cleanEnv({ DATABASE_URL: join(cwd, "state", "cli.sqlite") });
  const cli = (...args: string[]) => runCli(args, { cwd, env, timeoutMs: 60_000 });
  /** The same command with `--json`: the HTTP API's objects on stdout. */
  const json = (...args: string[]) => cli(...args, "--json");

  let account: AccountJson;
  let key: KeyJson & { key: string };

  beforeAll(async () => {
    const created = await json(
      "accounts",
      "create",
      "--email",
      "a@b.co",
      "--balance-micros",
      "5000000",
    );
    expect(created.code, created.stderr).toBe(0);
    account = parseJsonOutput<AccountJson>(created);
  });

  it("creates an account with its opening balance", () => {
    expect(account).toMatchObject({
      object: "account",
      email: "a@b.co",
      role: "user",
      balance_micros: 5_000_000,
    });
    expect(account.id).toEqual(expect.any(String));
    expect(account.id.length).toBeGreaterThan(0);
  });

  it("lists accounts", async () => {
    const result = await json("accounts", "list");
    expect(result.code, result.stderr).toBe(0);
    const accounts = parseJsonOutput<AccountJson[]>(result);
    expect(accounts).toEqual([expect.objectContaining({ id: account.id, email: "a@b.co" })]);
  });

  it("creates a key and prints it once", async () => {
    const result = await json(
      "keys",
      "create",
      "--account",
      account.id,
      "--name",
      "ci",
      "--models",
      "gpt-4o-mini",
    );
    expect(result.code, result.stderr).toBe(0);
    key = parseJsonOutput<KeyJson & { key: string }>(result);
    expect(key.key).toMatch(/^sk-[0-9A-Za-z]{40,}$/);
    expect(key).toMatchObject({
      object: "api_key",
      name: "ci",
      account_id: account.id,
      models: ["gpt-4o-mini"],
      revoked: false,
    });
    // The prefix is the key's first characters and an ellipsis, e.g. `sk-4fQz…`.
    const visible = key.prefix.replace(/…$/, "");
    expect(visible.length).toBeGreaterThan(3);
    expect(visible.length).toBeLessThan(12);
    expect(key.key.startsWith(visible)).toBe(true);
  });

  it("lists keys by prefix, never the key", async () => {
    const result = await json("keys", "list", "--account", account.id);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(key.key);
    expect(result.stdout).not.toMatch(/sk-[0-9A-Za-z]{40,}/);
    const keys = parseJsonOutput<KeyJson[]>(result);
    expect(keys).toEqual([expect.objectContaining({ id: key.id, prefix: key.prefix })]);
    expect(keys[0]).not.toHaveProperty("key");
  });

  it("revokes a key", async () => {
    const result = await json("keys", "revoke", key.id);
    expect(result.code, result.stderr).toBe(0);
    const revoked = parseJsonOutput<KeyJson>(result);
    expect(revoked).toMatchObject({ id: key.id, revoked: true });
    expect(Number.isNaN(Date.parse(revoked.revoked_at ?? ""))).toBe(false);
    expect(result.stdout).not.toContain(key.key);

    const list = parseJsonOutput<KeyJson[]>(await json("keys", "list", "--account", account.id));
    expect(list).toEqual([expect.objectContaining({ id: key.id, revoked: true })]);
  });

  it("debits with a negative credit", async () => {
    const result = await json(
      "accounts",
      "credit",
      account.id,
      "--amount-micros",
      "-1000000",
      "--reason",
      "test",
    );
    expect(result.code, result.stderr).toBe(0);
    expect(
      parseJsonOutput<{ amount_micros: number; balance_micros: number }>(result),
    ).toMatchObject({
      amount_micros: -1_000_000,
      balance_micros: 4_000_000,
    });
    const accounts = parseJsonOutput<AccountJson[]>(await json("accounts", "list"));
    expect(accounts.find((entry) => entry.id === account.id)?.balance_micros).toBe(4_000_000);
  });

  it("records every change in the audit trail, with the actor cli and no secret", async () => {
    const result = await json("audit");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(key.key);
    const events =
      parseJsonOutput<
        Array<{
          action: string;
          actor: { type: string };
          target: { id: string };
          before: Record<string, unknown> | null;
          after: Record<string, unknown> | null;
          reason: string | null;
        }>
      >(result);
    expect(events.map((event) => [event.action, event.target.id])).toEqual([
      ["account.debit", account.id],
      ["key.revoke", key.id],
      ["key.create", key.id],
      ["account.credit", account.id],
      ["account.create", account.id],
    ]);
    expect(events.every((event) => event.actor.type === "cli")).toBe(true);
    expect(events[0]).toMatchObject({
      reason: "test",
      before: { balance_micros: 5_000_000 },
      after: { balance_micros: 4_000_000, amount_micros: -1_000_000 },
    });

    const filtered = parseJsonOutput<Array<{ action: string }>>(
      await json("audit", "--action", "key.create", "--limit", "1"),
    );
    expect(filtered.map((event) => event.action)).toEqual(["key.create"]);

    const text = await cli("audit", "--target", account.id);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^TIME +ACTION +ACTOR +TARGET +CHANGE +REASON$/m);
    expect(text.stdout).toMatch(
      new RegExp(`account\\.debit +cli +account:${account.id} +balance_micros: 5000000 → 4000000`),
    );
    expect((await cli("audit", "--limit", "0")).code).toBe(2);
  });

  it("verifies the ledger", async () => {
    const result = await cli("ledger", "verify");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ledger ok: 1 accounts/);
  });

  it("refuses a credit above billing.max_balance_micros, changing nothing", async () => {
    const result = await cli(
      "accounts",
      "credit",
      account.id,
      "--amount-micros",
      String(Number.MAX_SAFE_INTEGER),
      "--reason",
      "overflow",
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/above the maximum/);
    const accounts = parseJsonOutput<AccountJson[]>(await json("accounts", "list"));
    expect(accounts.find((entry) => entry.id === account.id)?.balance_micros).toBe(4_000_000);
  });

  it("reports damaged ledger data with exit 1 instead of failing", async () => {
    const file = join(makeTempDir("switchyard-cli-damaged-"), "damaged.sqlite");
    const damaged = (...args: string[]) =>
      runCli(args, { cwd, env: cleanEnv({ DATABASE_URL: file }) });
    const created = parseJsonOutput<AccountJson>(
      await damaged("accounts", "create", "--email", "d@b.co", "--balance-micros", "5", "--json"),
    );
    const sqlite = new SQLite(file);
    sqlite
      .prepare("update accounts set balance_micros = 9223372036854775807 where id = ?")
      .run(created.id);
    for (const suffix of ["a", "b", "c"])
      sqlite
        .prepare(
          "insert into ledger_entries (id, account_id, kind, amount_micros, hold_micros, created_at) values (?, ?, 'credit', 4000000000000000000, 0, 0)",
        )
        .run(`led_${suffix}`, created.id);
    sqlite.close();
    const result = await damaged("ledger", "verify");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(new RegExp(`PROBLEM out_of_range ${created.id}`));
    expect(result.stdout).toMatch(/ledger NOT ok: 1 problems in 1 accounts, 4 entries/);
  });

  it("rejects bad usage with exit 2", async () => {
    const cases = [
      ["accounts", "create"],
      ["accounts", "credit", account.id, "--amount-micros", "1000"],
      ["accounts", "create", "--email", "x@b.co", "--balance-micros", "abc"],
      ["accounts", "create", "--email", "x@b.co", "--balance-micros=-5"],
      ["keys", "create", "--account", account.id, "--models", "no-such-model"],
      ["keys", "create", "--account", account.id, "--rpm", "0"],
      ["keys", "create", "--account", account.id, "--expires-at", "soon"],
      ["accounts", "list", "--no-such-option"],
    ];
    const results = await inBatches(cases, (args) => cli(...args));
    for (const [index, result] of results.entries()) {
      const args = cases[index];
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: expect.stringMatching(/\S/),
      });
    }
    // Nothing was half-done: no account for the rejected creates, no key for the rejected ones.
    const accounts = parseJsonOutput<AccountJson[]>(await json("accounts", "list"));
    expect(accounts).toHaveLength(1);
    expect(accounts[0]?.balance_micros).toBe(4_000_000);
    const keys = parseJsonOutput<KeyJson[]>(await json("keys", "list", "--account", account.id));
    expect(keys).toHaveLength(1);
  });

  it("refuses with exit 2 the emails and passwords POST /v1/admin/accounts refuses", async () => {
    const cases = [
      ["--email", "not-an-email"],
      ["--email", "a b@c.co"],
      ["--email", `${"x".repeat(250)}@b.co`],
      ["--email", "y@b.co", "--password", "short"],
    ];
    const results = await inBatches(cases, (args) => cli("accounts", "create", ...args));
    for (const [index, result] of results.entries()) {
      const args = cases[index];
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: expect.stringMatching(/^Invalid '(email|password)'/),
      });
    }
    const accounts = parseJsonOutput<AccountJson[]>(await json("accounts", "list"));
    expect(accounts.map((entry) => entry.email)).toEqual(["a@b.co"]);
  });

  it("exits 3 when the account or key does not exist", async () => {
    const cases = [
      ["keys", "create", "--account", "no-such-account"],
      ["keys", "list", "--account", "no-such-account"],
      ["keys", "revoke", "no-such-key"],
      ["accounts", "credit", "no-such-account", "--amount-micros", "1000", "--reason", "x"],
    ];
    const results = await inBatches(cases, (args) => cli(...args));
    for (const [index, result] of results.entries()) {
      const args = cases[index];
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 3,
        stderr: expect.stringMatching(/^No (account|key) 'no-such-(account|key)'\.$/m),
      });
    }
  });

  it("prints text for people without --json", async () => {
    const list = await cli("accounts", "list");
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID +EMAIL +ROLE +BALANCE_USD +CREATED$/m);
    expect(list.stdout).toMatch(new RegExp(`^${account.id} +a@b\\.co +user +4\\.000000 `, "m"));

    const created = await cli("keys", "create", "--account", account.id, "--name", "text");
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.split("\n").find((line) => /^sk-[0-9A-Za-z]{40,}$/.test(line));
    expect(secret).toBeDefined();
    expect(created.stdout).toContain(`for ${account.id}`);

    const verify = await json("ledger", "verify");
    expect(verify.code, verify.stderr).toBe(0);
    expect(parseJsonOutput<{ ok: boolean; problems: unknown[] }>(verify)).toMatchObject({
      ok: true,
      problems: [],
    });
  });

  it("writes the database the gateway serves from", async () => {
    const live = parseJsonOutput<KeyJson & { key: string }>(
      await json("keys", "create", "--account", account.id, "--models", "gpt-4o-mini"),
    );
    const gateway = await startGatewayProcess(cwd, { DATABASE_URL: env.DATABASE_URL as string });
    // The database is not empty, so no bootstrap key is printed.
    expect(gateway.proc.stdout()).not.toContain("First start");
    const chat = (bearer: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
    expect((await chat(live.key)).status).toBe(200);
    expect((await chat(key.key)).status).toBe(401);
    expect((await gateway.proc.stop("SIGTERM", 10_000)).code).toBe(0);
  });
});

describe("output piped into a reader that goes away", { timeout: 180_000 }, () => {
  const cwd = makeTempDir("switchyard-cli-pipe-");
  const databaseUrl = join(cwd, "state", "pipe.sqlite");

  beforeAll(async () => {
    // Enough accounts that the listing is far more than a pipe's buffer (64 KiB on Linux).
    const gateway = await startTestGateway({ config: { database_url: databaseUrl } });
    try {
      for (let start = 0; start < 1000; start += 50) {
        const created = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            gateway.request("/v1/admin/accounts", {
              key: gateway.adminKey,
              json: { email: `piped-${start + i}@example.com`, balance_micros: 1_000_000 },
            }),
          ),
        );
        for (const response of created) expect(response.status).toBe(201);
      }
    } finally {
      await gateway.close();
    }
  });

  /** `switchyard …args | head -n 1` through bash, exiting with the CLI's code (pipefail). */
  const piped = (...args: string[]) =>
    runCli(args, {
      cwd,
      env: cleanEnv({ DATABASE_URL: databaseUrl }),
      command: ["bash", "-c", 'set -o pipefail; "$0" "$@" | head -n 1', process.execPath, CLI_PATH],
      timeoutMs: 60_000,
    });

  it("accounts list | head -n 1 ends quietly with exit 0, table and --json alike", async () => {
    for (const [args, first] of [
      [["accounts", "list"], /^ID +EMAIL +ROLE/],
      [["accounts", "list", "--json"], /^\[\n$/],
    ] as const) {
      const result = await piped(...args);
      expect(result.stdout, args.join(" ")).toMatch(first);
      expect(result.stdout.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr, args.join(" ")).toBe("");
      expect(result.code, args.join(" ")).toBe(0);
    }
  });
});
