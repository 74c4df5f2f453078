/**
 * `kill -9` in the middle of requests: the restarted gateway settles at once what the dead
 * process had in flight — a long stream at its last checkpoint (at least its input); a request
 * still waiting for its upstream, which delivered nothing, is charged nothing like any failed
 * request — releases the rest of each hold, and the ledger verifies.
 * On SQLite and on PostgreSQL (with a stable `billing.instance_id`).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PG_URL, postgresReachable } from "./support/postgres.ts";
import { CLI, type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const ADMIN_KEY = `sk-${"Inflight".repeat(6)}`;
const pgAvailable = await postgresReachable();

interface UsageRow {
  request_id: string;
  status: string;
  output_tokens: number;
  cost_micros: number;
  held_micros: number;
}

/** Runs `body` against a schema of its own, dropped afterwards (other suites introspect). */
async function inFreshSchema(body: (url: string) => Promise<void>): Promise<void> {
  const schema = `switchyard_crash_${process.pid}_${Date.now()}`;
  const run = async (statement: string) => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(statement);
    await admin.end();
  };
  await run(`create schema ${schema}`);
  try {
    await body(`${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`);
  } finally {
    await run(`drop schema ${schema} cascade`);
  }
}

const backends = [
  { name: "SQLite", available: true },
  { name: "PostgreSQL", available: pgAvailable },
];

describe.each(backends)("requests in flight when the process dies ($name)", (backend) => {
  const children: SpawnedGateway[] = [];
  afterEach(() => {
    for (const gateway of children.splice(0)) gateway.child.kill("SIGKILL");
  });

  it.skipIf(!backend.available)(
    "are settled at once after a restart: streams at their checkpoint, waiting requests at nothing",
    async () => {
      if (backend.name === "SQLite") await crashAndRestart(undefined);
      else await inFreshSchema(crashAndRestart);
    },
    60_000,
  );

  async function crashAndRestart(postgresUrl: string | undefined): Promise<void> {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-inflight-"));
    writeFileSync(
      join(cwd, "switchyard.yaml"),
      "billing:\n  checkpoint_seconds: 1\n  instance_id: crash-test-instance\n",
    );
    const databaseUrl = postgresUrl ?? join(cwd, "gateway.sqlite");
    const env = { DATABASE_URL: databaseUrl, SWITCHYARD_ADMIN_KEY: ADMIN_KEY };
    const first = await spawnGateway({ cwd, env });
    children.push(first);
    const post = (content: string, stream: boolean) =>
      fetch(`${first.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-4o-mini",
          max_tokens: 5_000,
          stream,
          messages: [{ role: "user", content }],
        }),
      });
    const balanceBefore = await fetch(`${first.url}/v1/account/balance`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    }).then((response) => response.json() as Promise<{ balance_micros: number }>);

    // A long stream, read for a while (several checkpoints), and a request whose upstream
    // has not answered yet.
    const streaming = await post("[[sandbox:words=3000;chunk-delay=10]] a long story", true);
    const streamId = streaming.headers.get("x-request-id") ?? "";
    const waiting = post("[[sandbox:hang]] a question the vendor sits on", false).catch(
      () => undefined,
    );
    const reader = streaming.body!.getReader();
    const deadline = Date.now() + 2_600;
    let received = "";
    while (Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    expect(received).not.toContain("[DONE]");
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    await reader.cancel().catch(() => {});
    await waiting;

    const second = await spawnGateway({ cwd, env });
    children.push(second);
    const headers = { authorization: `Bearer ${ADMIN_KEY}` };
    const usage = await fetch(`${second.url}/v1/account/usage?limit=100`, { headers }).then(
      (response) => response.json() as Promise<{ data: UsageRow[] }>,
    );
    const interrupted = usage.data.filter((row) => row.status === "interrupted");
    expect(interrupted.map((row) => row.request_id)).toEqual([streamId]);
    const stream = interrupted[0];
    // The stream is charged for what it had delivered at its last checkpoint.
    expect(stream?.output_tokens).toBeGreaterThan(100);
    expect(stream?.cost_micros).toBeGreaterThan(0);
    expect(stream?.cost_micros).toBeLessThanOrEqual(stream?.held_micros ?? -1);
    // The waiting request delivered nothing: charged nothing (on PostgreSQL its hold's row is
    // settled as failed; on SQLite the hold was in memory and went with the process).
    const others = usage.data.filter((row) => row.request_id !== streamId);
    for (const row of others) expect(row).toMatchObject({ status: "failed", cost_micros: 0 });
    expect(others).toHaveLength(backend.name === "SQLite" ? 0 : 1);

    const balance = await fetch(`${second.url}/v1/account/balance`, { headers }).then(
      (response) => response.json() as Promise<{ balance_micros: number; held_micros: number }>,
    );
    expect(balance.held_micros).toBe(0);
    expect(balance.balance_micros).toBe(balanceBefore.balance_micros - (stream?.cost_micros ?? 0));

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const verify = spawnSync(process.execPath, [CLI, "ledger", "verify"], {
      cwd,
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(verify.stdout).toMatch(/ledger ok/);
    expect(verify.status).toBe(0);
  }
});
