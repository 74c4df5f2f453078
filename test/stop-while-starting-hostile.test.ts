/**
 * Stop signals while the gateway starts: a start-up that waits for its database
 * (database_wait_seconds, up to a day) ends the wait at the first stop signal and exits 0 with
 * nothing started (it used to keep the signal for when the database came up); a third stop
 * signal stops the process at once, as it stops a running gateway.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI } from "./support/spawn-gateway.ts";

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** `switchyard start` on a PostgreSQL that never answers, waiting up to two minutes for it. */
function startWaiting() {
  const cwd = mkdtempSync(join(tmpdir(), "switchyard-startwait-"));
  const child = spawn(process.execPath, [CLI, "start"], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: "postgres://switchyard:x@127.0.0.1:1/switchyard",
      DATABASE_WAIT_SECONDS: "120",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const within = (ms: number) =>
    Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve(`still running ${ms} ms later`), ms)),
    ]);
  return { child, within, output: () => output };
}

describe("stop signals while waiting for the database at start-up", { timeout: 30_000 }, () => {
  it("three SIGINTs stop the process at once, as the docs say", async () => {
    const { child, within, output } = startWaiting();
    // Up and waiting for the database.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (let i = 0; i < 3; i++) {
      child.kill("SIGINT");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outcome = await within(5_000);
    expect(outcome, output().slice(-2000)).not.toBe("still running 5000 ms later");
  });

  it("one SIGTERM ends the wait: nothing started, exit 0, one line saying so", async () => {
    const { child, within, output } = startWaiting();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(output()).toContain("database not reachable yet");
    child.kill("SIGTERM");
    // The backoff pause is up to 5 s: the signal must not wait for it, nor for the two minutes.
    const outcome = await within(2_000);
    expect(outcome, output().slice(-2000)).toBe(0);
    expect(output()).toContain("Stopped while waiting for the database");
  });
});
