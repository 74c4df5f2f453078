/**
 * The CLI's ledger tools against the SQLite file of a running gateway.
 *
 * A gateway on SQLite keeps its requests' holds in memory; `switchyard accounts credit` with a
 * negative amount must therefore refuse while a gateway serves the file (docs/accounts.md, The
 * CLI), or a debit can take money that requests in flight hold, and their settlement then takes
 * the balance below zero. The guard (src/cli/manage.ts `refuseDebitBesideGateway`) looks for
 * `<DATABASE_URL path>.gateway`, a file named after the path *as spelled*, so the same database
 * reached through another name (a symlink) was not recognised as served (the claim is now named
 * after the file's real path); and a debit from the command line after a gateway died did not
 * leave room for what its in-flight rows are charged at the next start (they now count as held).
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  killLeftovers,
  makeTempDir,
  removeTempDirs,
  runCli,
} from "./support/cli-process.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

describe("CLI debit beside a live SQLite gateway, the file named another way", {
  timeout: 120_000,
}, () => {
  for (const how of ["symlink"] as const) {
    it(`refuses a debit through a ${how} to the served file, so no request's hold is taken`, async () => {
      const cwd = makeTempDir("switchyard-admin-");
      mkdirSync(join(cwd, "real"));
      const real = join(cwd, "real", "gateway.sqlite");
      const alias = join(cwd, "alias.sqlite");
      let gateway: TestGateway | undefined;
      try {
        gateway = await startTestGateway({ config: { database_url: real } });
        symlinkSync(real, alias);
        const user = await createUser(gateway, { balanceMicros: 200 });
        // A stream that holds part of the balance for a couple of seconds.
        const response = await gateway.request("/v1/chat/completions", {
          key: user.key,
          json: {
            model: "gpt-4o-mini",
            stream: true,
            max_tokens: 200,
            messages: [
              { role: "system", content: "[[sandbox:chunk-delay=150;words=20]]" },
              { role: "user", content: "hello" },
            ],
          },
        });
        expect(response.status).toBe(200);
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        const mid = (await (
          await gateway.request("/v1/account/balance", { key: user.key })
        ).json()) as { balance_micros: number; held_micros: number };
        expect(mid.held_micros).toBeGreaterThan(0);

        // The operator debits the whole balance from the command line, through the other name.
        const debit = await runCli(
          ["accounts", "credit", user.accountId, "--amount-micros", "-200", "--reason", "refund"],
          { cwd, env: cleanEnv({ DATABASE_URL: alias }), timeoutMs: 60_000 },
        );
        // Let the stream finish and settle.
        while (!(await reader.read()).done) {}
        await new Promise((resolve) => setTimeout(resolve, 300));
        const report = await gateway.services.store.verify();

        // Expected: the CLI recognises the served file and refuses the debit (exit 1), as it
        // does when DATABASE_URL is spelled as the gateway spells it; the balance never goes
        // below zero. Before the fix: the debit goes through (exit 0) and the settlement of the stream
        // leaves a negative balance.
        expect({ code: debit.code, problems: report.problems }).toEqual({ code: 1, problems: [] });
      } finally {
        await gateway?.close();
      }
    });
  }
});

describe("CLI debit after a SQLite gateway died with a stream in flight", {
  timeout: 120_000,
}, () => {
  const children: SpawnedGateway[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.child.kill("SIGKILL");
  });

  it("does not debit what the dead gateway's in-flight rows will charge at restart", async () => {
    const cwd = makeTempDir("switchyard-admin-crash-");
    writeFileSync(join(cwd, "switchyard.yaml"), "billing:\n  checkpoint_seconds: 1\n");
    const ADMIN_KEY = `sk-${"ReviewAdm".repeat(5)}`;
    const env = { DATABASE_URL: join(cwd, "gateway.sqlite"), SWITCHYARD_ADMIN_KEY: ADMIN_KEY };
    const first = await spawnGateway({ cwd, env });
    children.push(first);
    const admin = (path: string, body: unknown) =>
      fetch(`${first.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<{ id: string; key: string }>);
    const account = await admin("/v1/admin/accounts", {
      email: "crash@example.com",
      balance_micros: 1_000_000,
    });
    const key = await admin(`/v1/admin/accounts/${account.id}/keys`, {});
    const streaming = await fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        max_tokens: 5_000,
        stream: true,
        messages: [{ role: "user", content: "[[sandbox:words=3000;chunk-delay=10]] a story" }],
      }),
    });
    const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
    const deadline = Date.now() + 2_600;
    while (Date.now() < deadline) if ((await reader.read()).done) break;
    first.child.kill("SIGKILL");
    await first.exited;
    await reader.cancel().catch(() => {});

    // The gateway is down; the operator refunds the whole balance from the command line.
    const debit = await runCli(
      ["accounts", "credit", account.id, "--amount-micros", "-1000000", "--reason", "refund"],
      { cwd, env: cleanEnv(env), timeoutMs: 60_000 },
    );

    // The restarted gateway settles the dead stream at its checkpoint (delivered units billed).
    const second = await spawnGateway({ cwd, env });
    children.push(second);
    second.child.kill("SIGTERM");
    await second.exited;
    const verify = await runCli(["ledger", "verify"], {
      cwd,
      env: cleanEnv(env),
      timeoutMs: 60_000,
    });

    // Expected: the debit is refused (exit 1, debit_exceeds_available) because the in-flight
    // rows left by the dead gateway will be charged at its restart, so the ledger stays sound
    // (no negative balance). Before the fix: the CLI sees held_micros 0 (SQLite holds lived in the dead
    // process's memory), debits everything (exit 0), and the restart's settlement takes the
    // balance below zero: `ledger verify` exits 1 with negative_balance.
    expect({ debit: debit.code, verify: verify.code, problems: verify.stdout }).toEqual({
      debit: 1,
      verify: 0,
      problems: expect.stringContaining("ledger ok"),
    });
  });
});

describe("a second gateway on the served SQLite file through a symlink", {
  timeout: 120_000,
}, () => {
  const children: SpawnedGateway[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.child.kill("SIGKILL");
  });

  it("is refused, as it is when DATABASE_URL names the file the same way", async () => {
    // Same root cause (src/store/sqlite-owner.ts keys the claim on the path as spelled; checked
    // by src/main/start-up.ts `refuseServedSqliteFile`): a second gateway would run start-up
    // recovery and settle the first one's requests, and each would hold money the other
    // cannot see. Expected: the second start fails. Before the fix: it starts and serves.
    const cwd = makeTempDir("switchyard-admin-second-");
    mkdirSync(join(cwd, "real"));
    const real = join(cwd, "real", "gateway.sqlite");
    const alias = join(cwd, "alias.sqlite");
    const first = await spawnGateway({ cwd, env: { DATABASE_URL: real } });
    children.push(first);
    symlinkSync(real, alias);
    const second = await spawnGateway({
      cwd,
      env: { DATABASE_URL: alias },
      timeoutMs: 15_000,
    }).then(
      (gateway) => {
        children.push(gateway);
        return "started";
      },
      () => "refused",
    );
    expect(second).toBe("refused");
  });
});
