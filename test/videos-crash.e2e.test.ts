/**
 * Video tasks survive a crash: the gateway is killed (`kill -9`) while 20 tasks run at the
 * vendor (the sandbox in a process of its own, as a real vendor would be); after a restart
 * every task reaches its final state, each successful one is charged exactly once, each failed
 * one is refunded in full, nothing stays held, and `switchyard ledger verify` passes.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startSandboxProcess } from "./support/cluster.ts";
import { CLI, type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const ADMIN_KEY = `sk-${"VideoCrash".repeat(5)}`;

describe("video tasks across a crash", () => {
  const children: Array<{ child: ChildProcess }> = [];
  afterEach(() => {
    for (const process of children.splice(0)) process.child.kill("SIGKILL");
  });

  it("finishes all 20 tasks after a restart, each billed once, the failed ones refunded", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-video-crash-"));
    writeFileSync(
      join(cwd, "switchyard.yaml"),
      "tasks:\n  tick_ms: 50\n  poll_min_interval_ms: 100\n  poll_max_interval_ms: 300\n",
    );
    const sandbox = await startSandboxProcess();
    children.push(sandbox);
    const databaseFile = join(cwd, "gateway.sqlite");
    const env = {
      DATABASE_URL: databaseFile,
      SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
      SWITCHYARD_SANDBOX_URL: sandbox.url,
    };
    const first: SpawnedGateway = await spawnGateway({ cwd, env });
    children.push(first);
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
    const before = (await (await fetch(`${first.url}/v1/account/balance`, { headers })).json()) as {
      balance_micros: number;
    };

    const submitted = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const fails = i % 4 === 0;
        const directive = fails
          ? "[[sandbox:video-seconds=2;video-fail=InternalError]]"
          : "[[sandbox:video-seconds=2]]";
        const response = await fetch(`${first.url}/v1/videos/generations`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            model: "gen-video",
            prompt: `clip ${i} ${directive}`,
            duration: 2,
          }),
        });
        expect(response.status).toBe(202);
        const task = (await response.json()) as { id: string };
        return { id: task.id, fails };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");

    const second = await spawnGateway({ cwd, env });
    children.push(second);
    const deadline = Date.now() + 30_000;
    const finals = new Map<
      string,
      { status: string; billing: { state: string; cost_micros: number } }
    >();
    while (finals.size < submitted.length && Date.now() < deadline) {
      for (const { id } of submitted) {
        if (finals.has(id)) continue;
        const task = (await (
          await fetch(`${second.url}/v1/videos/generations/${id}`, { headers })
        ).json()) as { status: string; billing: { state: string; cost_micros: number } };
        if (task.billing.state === "settled" || task.billing.state === "released")
          finals.set(id, task);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(finals.size).toBe(20);
    for (const { id, fails } of submitted) {
      const task = finals.get(id)!;
      expect(task.status).toBe(fails ? "failed" : "succeeded");
      expect(task.billing).toEqual(
        expect.objectContaining(
          fails
            ? { state: "released", cost_micros: 0 }
            : { state: "settled", cost_micros: 140_000 },
        ),
      );
    }
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);

    const db = new Database(databaseFile, { readonly: true });
    const closing = db
      .prepare(
        "select request_id, kind, count(*) as n from ledger_entries where request_id like 'vtask_%' group by request_id, kind",
      )
      .all() as Array<{ request_id: string; kind: string; n: number }>;
    const account = db
      .prepare("select balance_micros, held_micros from accounts where email = 'admin@localhost'")
      .get() as { balance_micros: number; held_micros: number };
    db.close();
    for (const { id, fails } of submitted) {
      const rows = closing.filter((row) => row.request_id === id);
      expect(rows.map((row) => [row.kind, row.n]).sort()).toEqual(
        [
          ["hold", 1],
          [fails ? "release" : "charge", 1],
        ].sort(),
      );
    }
    expect(account.held_micros).toBe(0);
    expect(account.balance_micros).toBe(before.balance_micros - 15 * 140_000);
    const verify = spawnSync(process.execPath, [CLI, "ledger", "verify"], {
      cwd,
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(verify.stdout).toMatch(/ledger ok/);
    expect(verify.status).toBe(0);
  }, 90_000);
});
