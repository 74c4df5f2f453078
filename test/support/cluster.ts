/**
 * @module test/support/cluster
 * The scale-out topology as plain processes: a fresh PostgreSQL database, a Redis server of the
 * test's own (so it can be stopped and started without disturbing other tests), a sandbox
 * process standing for the vendors, and gateway processes sharing all three. Needs a reachable
 * PostgreSQL and the `redis-server` binary; `clusterAvailable` says whether they are there.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { randomBase62 } from "../../src/store/index.ts";
import { PG_URL, postgresReachable } from "./postgres.ts";
import { CLI, type SpawnedGateway, spawnGateway } from "./spawn-gateway.ts";

export async function clusterAvailable(): Promise<boolean> {
  const redisServer = spawnSync("redis-server", ["--version"]).status === 0;
  return redisServer && (await postgresReachable());
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A Redis server of the test's own, on a free port, with no persistence. */
export async function startRedisServer(port?: number) {
  const chosen = port ?? (await freePort());
  const child = spawn(
    "redis-server",
    ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    async stop() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** A fresh PostgreSQL database on the test server; `drop` removes it. */
export async function freshDatabase() {
  const name = `sy_${randomBase62(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** The sandbox in a process of its own, as the vendors are to a real deployment. */
export async function startSandboxProcess() {
  const child: ChildProcess = spawn(process.execPath, [CLI, "sandbox", "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}: ${output}`)));
  });
  return { child, url };
}

export interface Cluster {
  adminKey: string;
  databaseUrl: string;
  redis: Awaited<ReturnType<typeof startRedisServer>>;
  redisPrefix: string;
  gateways: SpawnedGateway[];
  /** Replaces the shared `switchyard.yaml` (the Redis prefix stays). */
  writeConfig(yaml: string): void;
  /** Starts one more gateway sharing everything. */
  addGateway(): Promise<SpawnedGateway>;
  close(): Promise<void>;
}

/** PostgreSQL, Redis, the sandbox and `count` gateways (started one after the other). */
export async function startCluster(count: number, configYaml: string): Promise<Cluster> {
  const database = await freshDatabase();
  const redis = await startRedisServer();
  const sandbox = await startSandboxProcess();
  const cwd = mkdtempSync(join(tmpdir(), "switchyard-cluster-"));
  const redisPrefix = `cluster-${randomBase62(8)}:`;
  const writeConfig = (yaml: string) =>
    writeFileSync(join(cwd, "switchyard.yaml"), `redis:\n  key_prefix: "${redisPrefix}"\n${yaml}`);
  writeConfig(configYaml);
  const adminKey = `sk-${randomBase62(48)}`;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    SWITCHYARD_ADMIN_KEY: adminKey,
    SWITCHYARD_SANDBOX: "always",
    SWITCHYARD_SANDBOX_URL: sandbox.url,
  };
  const gateways: SpawnedGateway[] = [];
  const addGateway = async () => {
    const gateway = await spawnGateway({ cwd, env, timeoutMs: 30_000 });
    gateways.push(gateway);
    return gateway;
  };
  // One at a time: the first creates the schema and the admin.
  for (let i = 0; i < count; i++) await addGateway();
  const cluster: Cluster = {
    adminKey,
    databaseUrl: database.url,
    redis,
    redisPrefix,
    gateways,
    writeConfig,
    addGateway,
    async close() {
      for (const gateway of gateways) gateway.child.kill("SIGKILL");
      await Promise.all(gateways.map((gateway) => gateway.exited));
      sandbox.child.kill("SIGKILL");
      // The Redis of now: a test that restarted it put the new server here.
      await cluster.redis.stop().catch(() => {});
      await database.drop();
    },
  };
  return cluster;
}
