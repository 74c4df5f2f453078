/**
 * `switchyard start --workers N`: several gateway processes on one port. On PostgreSQL the
 * primary migrates and bootstraps once (one admin key printed), both workers serve, a killed
 * worker is replaced, and SIGTERM stops everything with exit 0. On SQLite more than one worker is
 * refused with exit 2 and a message that says why.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freshDatabase } from "./support/cluster.ts";
import { postgresReachable } from "./support/postgres.ts";
import { CLI, type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const pgAvailable = await postgresReachable();

/** A request on a connection of its own, so the kernel may hand it to either worker. */
function freshConnection(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      model: "gpt-4o-mini",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
    });
    const call = request(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    call.on("error", reject);
    call.end(body);
  });
}

const childPids = (parent: number) =>
  spawnSync("pgrep", ["-P", String(parent)], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);

describe("start --workers", () => {
  it("refuses more than one worker on SQLite, saying why, with exit 2", () => {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-workers-"));
    const result = spawnSync(process.execPath, [CLI, "start", "--workers", "2"], {
      cwd,
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: join(cwd, "db.sqlite") },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /2 workers need PostgreSQL: a SQLite database serves one process/,
    );
    const bad = spawnSync(process.execPath, [CLI, "start", "--workers", "many"], {
      cwd,
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--workers must be an integer 1-64 or 'auto', got 'many'/);
  });

  describe.skipIf(!pgAvailable)("on PostgreSQL", { timeout: 120_000 }, () => {
    let database: Awaited<ReturnType<typeof freshDatabase>>;
    let gateway: SpawnedGateway | undefined;
    afterAll(async () => {
      gateway?.child.kill("SIGKILL");
      await database?.drop();
    });

    it("bootstraps once, serves from both workers, replaces a dead one and stops on SIGTERM", async () => {
      database = await freshDatabase();
      const cwd = mkdtempSync(join(tmpdir(), "switchyard-workers-"));
      gateway = await spawnGateway({
        cwd,
        args: ["--workers", "2"],
        env: { DATABASE_URL: database.url, LOG_LEVEL: "info", SWITCHYARD_SANDBOX: "always" },
        timeoutMs: 60_000,
      });
      const pid = gateway.child.pid!;
      await expect.poll(() => childPids(pid).length, { timeout: 10_000 }).toBe(2);
      // The banner's later lines may still be on their way.
      await expect.poll(() => gateway!.output()).toMatch(/^sk-\S+$/m);
      const keys = gateway.output().match(/^sk-\S+$/gm) ?? [];
      expect(keys).toHaveLength(1);
      expect(gateway.output()).toMatch(/2 workers \(pids \d+, \d+\); database postgres/);
      const key = keys[0]!;

      const statuses = await Promise.all(
        Array.from({ length: 30 }, () => freshConnection(gateway!.url, key)),
      );
      expect(new Set(statuses)).toEqual(new Set([200]));
      const servedBy = new Set(
        gateway
          .output()
          .split("\n")
          .filter((line) => line.includes('"msg":"request completed"'))
          .map((line) => (JSON.parse(line) as { pid: number }).pid),
      );
      expect(servedBy.size).toBe(2);

      const [victim] = childPids(pid);
      process.kill(victim!, "SIGKILL");
      await expect
        .poll(() => childPids(pid).filter((each) => each !== victim).length, { timeout: 15_000 })
        .toBe(2);
      expect(gateway.output()).toMatch(/worker exited unexpectedly: starting a new one/);
      // The replacement listens too (a third "Server listening" line).
      await expect
        .poll(() => gateway!.output().match(/"msg":"Server listening at/g)?.length ?? 0, {
          timeout: 30_000,
        })
        .toBe(3);
      expect(await freshConnection(gateway.url, key)).toBe(200);

      gateway.child.kill("SIGTERM");
      expect(await gateway.exited).toBe(0);
      expect(childPids(pid)).toEqual([]);
    });
  });
});
