/**
 * `start --workers N`: a worker killed by a signal while the workers drain (the OOM killer, an
 * operator's kill -9 on a stuck worker) is a failed stop, not a clean one: its requests were cut
 * without their settlement, so the primary exits non-zero and a supervisor sees it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freshDatabase } from "./support/cluster.ts";
import { postgresReachable } from "./support/postgres.ts";
import { type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const pgAvailable = await postgresReachable();

const childPids = (parent: number) =>
  spawnSync("pgrep", ["-P", String(parent)], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);

describe.skipIf(!pgAvailable)(
  "start --workers: a worker killed during the drain",
  { timeout: 120_000 },
  () => {
    let database: Awaited<ReturnType<typeof freshDatabase>>;
    let gateway: SpawnedGateway | undefined;
    afterAll(async () => {
      gateway?.child.kill("SIGKILL");
      await database?.drop();
    });

    it("makes the primary exit non-zero, not 0", async () => {
      database = await freshDatabase();
      const cwd = mkdtempSync(join(tmpdir(), "switchyard-workers-"));
      gateway = await spawnGateway({
        cwd,
        args: ["--workers", "2"],
        env: {
          DATABASE_URL: database.url,
          SWITCHYARD_SANDBOX: "always",
          SWITCHYARD_DRAIN_DELAY_SECONDS: "4",
        },
        timeoutMs: 60_000,
      });
      const pid = gateway.child.pid!;
      await expect.poll(() => childPids(pid).length, { timeout: 10_000 }).toBe(2);
      const [victim] = childPids(pid);
      gateway.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.kill(victim!, "SIGKILL");
      expect(await gateway.exited).not.toBe(0);
    });
  },
);
