/**
 * `switchyard keys revoke` and `switchyard accounts credit` with more positional
 * arguments than they take. docs/accounts.md (The CLI): exit 2 is "Usage: an unknown command or
 * option, a missing or invalid value". src/cli/manage.ts parses with `allowPositionals: true`
 * and reads only `positionals[0]`, so the rest are dropped in silence and the command exits 0:
 * `keys revoke key_a key_b` (two leaked keys) revokes key_a only, and key_b keeps working.
 * Expected (and now so): extra positionals are a usage error (exit 2), and nothing is changed.
 */
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  killLeftovers,
  makeTempDir,
  parseJsonOutput,
  removeTempDirs,
  runCli,
} from "./support/cli-process.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

describe("CLI commands given more ids than they take", { timeout: 120_000 }, () => {
  const cwd = makeTempDir("switchyard-admin-args-");
  const env = cleanEnv({ DATABASE_URL: join(cwd, "cli.sqlite") });
  const cli = (...args: string[]) => runCli(args, { cwd, env, timeoutMs: 60_000 });

  it("keys revoke key_a key_b: refuses (exit 2) rather than revoking key_a alone", async () => {
    const account = parseJsonOutput<{ id: string }>(
      await cli("accounts", "create", "--email", "two@keys.io", "--json"),
    );
    const a = parseJsonOutput<{ id: string }>(
      await cli("keys", "create", "--account", account.id, "--json"),
    );
    const b = parseJsonOutput<{ id: string }>(
      await cli("keys", "create", "--account", account.id, "--json"),
    );
    const revoke = await cli("keys", "revoke", a.id, b.id);
    const keys = parseJsonOutput<Array<{ id: string; revoked: boolean }>>(
      await cli("keys", "list", "--account", account.id, "--json"),
    );
    // Expected: exit 2, neither key touched (or, if several ids were supported, both revoked).
    // Before the fix: exit 0, key_a revoked, key_b still active.
    const revoked = Object.fromEntries(keys.map((key) => [key.id, key.revoked]));
    expect(revoke.code).toBe(2);
    expect(revoked[a.id]).toBe(revoked[b.id]);
  });

  it("accounts credit acct_a acct_b: refuses (exit 2) rather than crediting acct_a alone", async () => {
    const first = parseJsonOutput<{ id: string }>(
      await cli("accounts", "create", "--email", "first@acct.io", "--json"),
    );
    const second = parseJsonOutput<{ id: string }>(
      await cli("accounts", "create", "--email", "second@acct.io", "--json"),
    );
    const credit = await cli(
      "accounts",
      "credit",
      first.id,
      second.id,
      "--amount-micros",
      "5",
      "--reason",
      "both",
    );
    const accounts = parseJsonOutput<Array<{ id: string; balance_micros: number }>>(
      await cli("accounts", "list", "--json"),
    );
    const balance = Object.fromEntries(accounts.map((each) => [each.id, each.balance_micros]));
    // Expected: exit 2 and no balance changed. Before the fix: exit 0, only the first account credited.
    expect({ code: credit.code, first: balance[first.id], second: balance[second.id] }).toEqual({
      code: 2,
      first: 0,
      second: 0,
    });
  });
});
