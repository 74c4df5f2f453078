/**
 * Database outages against the real `switchyard start` process: PostgreSQL connections
 * terminated under load (`pg_terminate_backend`), PostgreSQL gone and back (a TCP proxy taken
 * down), and a database that is not up yet at start-up. The process stays up, answers
 * `503 store_unavailable` while the database is unreachable, recovers by itself, and the ledger
 * verifies afterwards. Skipped when PostgreSQL does not answer, except the give-up case.
 */
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  type GatewayProcess,
  killLeftovers,
  makeTempDir,
  randomBase62,
  removeTempDirs,
  runCli,
  spawnCli,
  startGatewayProcess,
} from "./support/cli-process.ts";
import { PG_URL, postgresReachable } from "./support/postgres.ts";
import { freePort, startTcpProxy } from "./support/tcp-proxy.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

const pgAvailable = await postgresReachable();
const pgTarget = new URL(PG_URL);
const databases: string[] = [];

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database of its own on PG_URL's server (dropped after the tests), its connections
 * named `application`, optionally through a proxy's port.
 */
async function databaseUrl(application: string, port?: number): Promise<string> {
  const database = `switchyard_outage_${process.pid}_${databases.length}_${Date.now()}`;
  await admin((client) => client.query(`create database ${database}`));
  databases.push(database);
  const url = new URL(PG_URL);
  if (port !== undefined) {
    url.hostname = "127.0.0.1";
    url.port = String(port);
  }
  url.pathname = `/${database}`;
  url.searchParams.set("application_name", application);
  return url.toString();
}

interface Outcome {
  status: number;
  code?: string;
}

/** A small non-streaming chat completion (sandbox upstream): its status and error code. */
async function chat(gateway: GatewayProcess, key: string): Promise<Outcome> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code };
}

async function readyz(gateway: GatewayProcess): Promise<Outcome> {
  const response = await fetch(`${gateway.url}/readyz`);
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  let last = await probe();
  while (!done(last) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await probe();
  }
  return last;
}

async function verifyLedger(url: string) {
  const result = await runCli(["ledger", "verify"], {
    cwd: makeTempDir("switchyard-outage-verify-"),
    env: cleanEnv({ DATABASE_URL: url }),
  });
  expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
  expect(result.stdout).toMatch(/^ledger ok: /);
}

describe.skipIf(!pgAvailable)("PostgreSQL outages", { timeout: 90_000 }, () => {
  afterAll(async () => {
    for (const database of databases.splice(0))
      await admin((client) => client.query(`drop database if exists ${database} with (force)`));
  });

  it("survives its connections being terminated under load and verifies afterwards", async () => {
    const application = `switchyard-outage-${randomBase62(8)}`;
    const url = await databaseUrl(application);
    const key = `sk-${randomBase62(48)}`;
    const gateway = await startGatewayProcess(makeTempDir("switchyard-outage-kill-"), {
      DATABASE_URL: url,
      SWITCHYARD_ADMIN_KEY: key,
    });
    expect((await chat(gateway, key)).status).toBe(200);

    const outcomes: Outcome[] = [];
    let loading = true;
    const workers = Array.from({ length: 4 }, async () => {
      while (loading) outcomes.push(await chat(gateway, key));
    });
    let terminated = 0;
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const result = await admin((client) =>
        client.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
          [application],
        ),
      );
      terminated += result.rowCount ?? 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    loading = false;
    await Promise.all(workers);

    expect(terminated).toBeGreaterThan(0);
    expect(gateway.proc.child.exitCode).toBeNull();
    expect(outcomes.length).toBeGreaterThan(10);
    // Every answer during the terminations is a success or a 503 store_unavailable.
    for (const outcome of outcomes) {
      if (outcome.status !== 200)
        expect(outcome).toEqual({ status: 503, code: "store_unavailable" });
    }
    // Afterwards everything works again, without a restart.
    for (let i = 0; i < 5; i++) expect(await chat(gateway, key)).toEqual({ status: 200 });
    expect((await readyz(gateway)).status).toBe(200);

    expect((await gateway.proc.stop("SIGTERM", 15_000)).code).toBe(0);
    await verifyLedger(url);
  });

  it("answers 503 store_unavailable while PostgreSQL is gone and recovers when it returns", async () => {
    const proxy = await startTcpProxy({
      host: pgTarget.hostname,
      port: Number(pgTarget.port || 5432),
    });
    try {
      const url = await databaseUrl(`switchyard-proxy-${randomBase62(8)}`, proxy.port);
      const key = `sk-${randomBase62(48)}`;
      const gateway = await startGatewayProcess(makeTempDir("switchyard-outage-proxy-"), {
        DATABASE_URL: url,
        SWITCHYARD_ADMIN_KEY: key,
      });
      expect(await chat(gateway, key)).toEqual({ status: 200 });

      await proxy.down();
      expect(await chat(gateway, key)).toEqual({ status: 503, code: "store_unavailable" });
      expect(await readyz(gateway)).toEqual({ status: 503, code: "store_unavailable" });
      expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
      expect(gateway.proc.child.exitCode).toBeNull();

      await proxy.up();
      expect(
        await until(
          () => chat(gateway, key),
          (o) => o.status === 200,
          15_000,
        ),
      ).toEqual({
        status: 200,
      });
      expect((await readyz(gateway)).status).toBe(200);
      const logs = gateway.proc.stdout();
      expect(logs).toContain("database unavailable");
      expect(logs).toContain("database available again");

      expect((await gateway.proc.stop("SIGTERM", 15_000)).code).toBe(0);
      await verifyLedger(url);
    } finally {
      await proxy.close();
    }
  });

  it("waits at start-up for a database that comes up later", async () => {
    const proxy = await startTcpProxy(
      { host: pgTarget.hostname, port: Number(pgTarget.port || 5432) },
      { listening: false },
    );
    try {
      const key = `sk-${randomBase62(48)}`;
      const url = await databaseUrl(`switchyard-wait-${randomBase62(8)}`, proxy.port);
      const proc = spawnCli(["start"], {
        cwd: makeTempDir("switchyard-outage-wait-"),
        env: cleanEnv({
          PORT: "0",
          DATABASE_URL: url,
          DATABASE_WAIT_SECONDS: "60",
          SWITCHYARD_ADMIN_KEY: key,
          SWITCHYARD_DRAIN_DELAY_SECONDS: "0",
        }),
      });
      await proc.waitForLine(/database not reachable yet/, 20_000);
      expect(proc.child.exitCode).toBeNull();
      await proxy.up();
      const { line } = await proc.waitForLine(/^Switchyard listening on /, 30_000);
      const base = line.replace("Switchyard listening on ", "");
      const models = await fetch(`${base}/v1/models`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(models.status).toBe(200);
      expect((await proc.stop("SIGTERM", 15_000)).code).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});

describe("a database that never comes up", { timeout: 60_000 }, () => {
  it("is waited for database_wait_seconds, then start-up gives up with one clear line", async () => {
    const port = await freePort();
    const url = `postgres://switchyard@127.0.0.1:${port}/switchyard`;
    const proc = spawnCli(["start"], {
      cwd: makeTempDir("switchyard-outage-giveup-"),
      env: cleanEnv({ PORT: "0", DATABASE_URL: url, DATABASE_WAIT_SECONDS: "2" }),
    });
    const first = await proc.waitForLine(/database not reachable yet/, 20_000);
    const exit = await proc.waitForExit(20_000);
    expect(exit.code).toBe(1);
    // It kept trying for the configured time, with backoff, and said so.
    expect(exit.at - first.at).toBeGreaterThan(1_500);
    const retries = proc.lines.filter((line) => line.includes("database not reachable yet"));
    expect(retries.length).toBeGreaterThanOrEqual(3);
    expect(proc.stderr().trim()).toBe(
      `Could not reach the database ${url} within 2 s (database_wait_seconds): connect ECONNREFUSED 127.0.0.1:${port}. Check that it is running and that DATABASE_URL (database_url) names it.`,
    );
    expect(proc.stdout()).not.toMatch(/Switchyard listening/);
  });
});
