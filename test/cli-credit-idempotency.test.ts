/**
 * `switchyard accounts credit --idempotency-key K` (docs/accounts.md, The CLI): a billing script
 * that runs the command again after a crash or a timeout credits once; the same key with
 * another amount is refused (exit 1) and a malformed key is a usage error (exit 2).
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

describe("CLI credits with an idempotency key", { timeout: 120_000 }, () => {
  const cwd = makeTempDir("switchyard-cli-idempotency-");
  const env = cleanEnv({ DATABASE_URL: join(cwd, "cli.sqlite") });
  const cli = (...args: string[]) => runCli(args, { cwd, env, timeoutMs: 60_000 });
  const credit = (id: string, amount: string, ...extra: string[]) =>
    cli("accounts", "credit", id, "--amount-micros", amount, "--reason", "invoice 9", ...extra);
  const balanceOf = async (id: string) =>
    parseJsonOutput<Array<{ id: string; balance_micros: number }>>(
      await cli("accounts", "list", "--json"),
    ).find((account) => account.id === id)?.balance_micros;

  it("credits once however often it runs; another amount under the key is refused", async () => {
    const account = parseJsonOutput<{ id: string }>(
      await cli("accounts", "create", "--email", "script@billing.io", "--json"),
    );
    const first = parseJsonOutput<{ id: string; replayed: boolean; balance_micros: number }>(
      await credit(account.id, "4000", "--idempotency-key", "inv-9", "--json"),
    );
    expect(first).toMatchObject({ replayed: false, balance_micros: 4_000 });
    const again = await credit(account.id, "4000", "--idempotency-key", "inv-9");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Already done with this idempotency key");
    expect(again.stdout).toContain(first.id);
    expect(await balanceOf(account.id)).toBe(4_000);

    const other = await credit(account.id, "5000", "--idempotency-key", "inv-9");
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("inv-9");
    expect(await balanceOf(account.id)).toBe(4_000);

    const malformed = await credit(account.id, "4000", "--idempotency-key", "two words");
    expect(malformed.code).toBe(2);
    expect(await balanceOf(account.id)).toBe(4_000);
  });
});
