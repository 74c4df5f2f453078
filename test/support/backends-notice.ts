/**
 * @module test/support/backends-notice
 * Vitest global setup: says, before the run, which engines the tests found. Without a reachable
 * PostgreSQL or Redis (or the `redis-server` binary) the suites that need them are skipped, and
 * this names them and how to run them, so a green run on a bare machine never hides what it
 * did not test. With `SWITCHYARD_TEST_BACKEND=postgres` both are required: every test gateway
 * runs on them, so their absence fails the run at once.
 */
import { spawnSync } from "node:child_process";
import { PG_URL, postgresReachable } from "./postgres.ts";
import { REDIS_URL, redisReachable } from "./redis.ts";

const POSTGRES_SUITES = [
  "src/store/store.test.ts, src/store/sql-tasks.test.ts, src/store/ledger-verify.test.ts (PostgreSQL halves)",
  "test/inflight-crash.e2e.test.ts (PostgreSQL half), test/store-outage.test.ts",
];
const SCALE_OUT_SUITES = ["test/scale-out.e2e.test.ts (PostgreSQL and the redis-server binary)"];
const REDIS_SUITES = ["src/limits/redis-quotas.test.ts (the shared-instance half)"];

export default async function setup(): Promise<void> {
  const [postgres, redis] = await Promise.all([postgresReachable(), redisReachable()]);
  const redisServer = spawnSync("redis-server", ["--version"]).status === 0;
  const backend = process.env.SWITCHYARD_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";
  if (backend === "postgres" && (!postgres || !redis)) {
    throw new Error(
      `SWITCHYARD_TEST_BACKEND=postgres needs PostgreSQL at ${PG_URL} (${postgres ? "up" : "unreachable"}) and Redis at ${REDIS_URL} (${redis ? "up" : "unreachable"}).`,
    );
  }
  const skipped = [
    ...(postgres ? [] : POSTGRES_SUITES),
    ...(postgres && redisServer ? [] : SCALE_OUT_SUITES),
    ...(redis ? [] : REDIS_SUITES),
  ];
  const lines = [
    `test engines: gateways on ${backend === "postgres" ? "PostgreSQL + Redis" : "SQLite"}; PostgreSQL ${postgres ? "up" : "not reachable"} (${PG_URL}); Redis ${redis ? "up" : "not reachable"} (${REDIS_URL}); redis-server ${redisServer ? "found" : "not found"}`,
  ];
  if (skipped.length > 0) {
    lines.push(
      "SKIPPED for want of an engine:",
      ...skipped.map((suite) => `  - ${suite}`),
      "Run them with PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`, or TEST_POSTGRES_URL) and Redis on 127.0.0.1:6379 (or TEST_REDIS_URL); `.ci/run` starts both when they are installed.",
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
