import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const ADMIN_KEY = `sk-${"Crash".repeat(10)}`;

describe("a process killed mid-load loses no charge and leaves no hold", () => {
  const children: SpawnedGateway[] = [];
  afterEach(() => {
    for (const gateway of children.splice(0)) gateway.child.kill("SIGKILL");
  });

  it("charges every completed request exactly once, and a crash leaves no hold behind", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-crash-"));
    const databaseFile = join(cwd, "gateway.sqlite");
    const env = { DATABASE_URL: databaseFile, SWITCHYARD_ADMIN_KEY: ADMIN_KEY };
    const first = await spawnGateway({ cwd, env });
    children.push(first);

    const completed: string[] = [];
    const started: Promise<void>[] = [];
    const send = async (i: number) => {
      const stream = i % 3 === 0;
      const delay = 50 + (i % 7) * 60;
      try {
        const response = await fetch(`${first.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: "gpt-4o-mini",
            max_tokens: 64,
            stream,
            messages: [
              { role: "user", content: `[[sandbox:delay=${delay};chunk-delay=20]] request ${i}` },
            ],
          }),
        });
        const text = await response.text();
        const done =
          response.status === 200 &&
          (stream ? text.includes("data: [DONE]") : text.includes('"usage"'));
        if (done) completed.push(response.headers.get("x-request-id") ?? "");
      } catch {
        // The process died under this request: it did not complete.
      }
    };
    // Keep ~40 requests in flight; kill the process once a good number have completed.
    for (let i = 0; i < 400 && completed.length < 25; i++) {
      started.push(send(i));
      await new Promise((resolve) => setTimeout(resolve, 8));
    }
    first.child.kill("SIGKILL");
    await Promise.all(started);
    expect(await first.exited).toBe("SIGKILL");
    expect(completed.length).toBeGreaterThanOrEqual(25);
    expect(completed.length).toBeLessThan(started.length);

    // Streams that had started delivering left a durable in-flight row each (the holds of the
    // others lived in the process and went with it: docs/billing.md).
    const crashed = new Database(databaseFile, { readonly: true });
    const leftInFlight = (
      crashed.prepare("select request_id from inflight_requests").all() as Array<{
        request_id: string;
      }>
    ).map((row) => row.request_id);
    crashed.close();
    expect(leftInFlight.length).toBeGreaterThan(0);
    for (const requestId of leftInFlight) expect(completed).not.toContain(requestId);

    const second = await spawnGateway({ cwd, env });
    children.push(second);
    const db = new Database(databaseFile, { readonly: true });
    const charges = db
      .prepare(
        "select request_id, count(*) as n from ledger_entries where kind = 'charge' group by request_id",
      )
      .all() as Array<{ request_id: string; n: number }>;
    const chargeCount = new Map(charges.map((row) => [row.request_id, row.n]));
    for (const requestId of completed) expect(chargeCount.get(requestId)).toBe(1);
    expect(charges.every((row) => row.n === 1)).toBe(true);
    // The restart settled every row it found: once, as interrupted, and none is left.
    for (const requestId of leftInFlight) expect(chargeCount.get(requestId)).toBe(1);
    const settled = db
      .prepare(
        `select status from usage_records where request_id in (${leftInFlight.map(() => "?").join(",")})`,
      )
      .all(...leftInFlight) as Array<{ status: string }>;
    expect(settled.map((row) => row.status)).toEqual(leftInFlight.map(() => "interrupted"));
    const remaining = db.prepare("select count(*) as n from inflight_requests").get() as {
      n: number;
    };
    expect(remaining.n).toBe(0);
    db.close();

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const verify = spawnSync(process.execPath, [CLI, "ledger", "verify"], {
      cwd,
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(verify.stdout).toMatch(/ledger ok/);
    expect(verify.status).toBe(0);
  }, 60_000);
});
