/**
 * @module test/support/spawn-gateway
 * Runs `switchyard start` as a child process (as `npm start` does) and waits for its banner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../bin/switchyard.js", import.meta.url));

export interface SpawnedGateway {
  child: ChildProcess;
  url: string;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

export async function spawnGateway(options: {
  cwd: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Arguments after `start` (e.g. `--workers 2`). */
  args?: string[];
}): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, [CLI, "start", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: "0",
      LOG_LEVEL: "warn",
      // SIGTERM stops at once: no drain delay unless a test sets one.
      SWITCHYARD_DRAIN_DELAY_SECONDS: "0",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`gateway did not start in time.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 15_000);
    const check = () => {
      const match = /Switchyard listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    });
  });
  return { child, url, output: () => stdout, exited };
}
