/**
 * Stop signals while the gateway starts: a start-up that waits for its database
 * (database_wait_seconds, up to a day) keeps the first stop signals for when it is up, but a
 * third one stops the process at once, as it stops a running gateway.
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

describe("stop signals while waiting for the database at start-up", { timeout: 30_000 }, () => {
  it("three SIGINTs stop the process at once, as the docs say", async () => {
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
    // Up and waiting for the database.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (let i = 0; i < 3; i++) {
      child.kill("SIGINT");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outcome = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve("still running 5 s later"), 5_000)),
    ]);
    expect(outcome, output.slice(-2000)).not.toBe("still running 5 s later");
  });
});
