/**
 * @module test/support/cli-process
 * Runs `node bin/switchyard.js …` as real child processes for end-to-end tests: a clean
 * environment (no vendor credentials, no inherited gateway settings), line-by-line output with
 * waits, and a registry of every process started so a test hook can kill what is left over.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The CLI entry, absolute, so the child can run from any working directory. */
export const CLI_PATH = join(REPO_ROOT, "bin", "switchyard.js");

/** A base62 string of `length` random characters. */
export function randomBase62(length: number): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

/**
 * Only what a shell needs: nothing from the test runner's environment leaks into the child
 * (no vendor credentials, no PORT, DATABASE_URL, SWITCHYARD_* or LOG_LEVEL).
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "SystemRoot"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

const tempDirs: string[] = [];

/** A fresh empty directory, removed by `removeTempDirs`. */
export function makeTempDir(prefix = "switchyard-cli-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `performance.now()` when the process exited. */
  at: number;
}

export interface CliProcess {
  child: ChildProcess;
  /** `performance.now()` just before the spawn. */
  startedAt: number;
  /** Complete stdout lines so far. */
  lines: string[];
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Resolves with the first stdout line matching `pattern` (already printed or to come). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<{ line: string; at: number }>;
  /** Sends `signal` and waits for the exit; SIGKILLs and rejects when it takes too long. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
  /** Waits for the exit without signalling; SIGKILLs and rejects when it takes too long. */
  waitForExit(timeoutMs: number): Promise<Exit>;
}

const live = new Set<CliProcess>();

/** SIGKILLs every process started by `spawnCli` that is still running; for `afterEach`. */
export async function killLeftovers(): Promise<void> {
  const left = [...live];
  live.clear();
  await Promise.all(
    left.map(async (proc) => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill("SIGKILL");
      }
      await proc.exited;
    }),
  );
}

function outputOf(proc: { stdout(): string; stderr(): string }): string {
  return `\n--- stdout ---\n${proc.stdout().slice(-4000)}\n--- stderr ---\n${proc.stderr().slice(-4000)}`;
}

export function spawnCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; command?: string[] },
): CliProcess {
  const startedAt = performance.now();
  const [command, ...prefix] = options.command ?? [process.execPath, CLI_PATH];
  const child = spawn(command as string, [...prefix, ...args], {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let partial = "";
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (text: string) => {
    out += text;
    partial += text;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.map((line) => line.replace(/\r$/, "")));
    for (const wake of waiters) wake();
  });
  child.stderr?.on("data", (text: string) => {
    err += text;
  });
  child.on("error", (error) => {
    err += `spawn error: ${error.message}\n`;
  });
  let exitAt = 0;
  child.once("exit", () => {
    exitAt = performance.now();
  });
  // "close" comes after "exit" and after the pipes are drained, so the output is complete.
  const exited = new Promise<Exit>((resolve) => {
    child.once("close", (code, signal) => {
      if (partial) lines.push(partial);
      partial = "";
      resolve({ code, signal, at: exitAt || performance.now() });
    });
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    for (const wake of waiters) wake();
  });

  const proc: CliProcess = {
    child,
    startedAt,
    lines,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLine(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = lines.find((candidate) => pattern.test(candidate));
          if (line !== undefined) {
            finish();
            resolve({ line, at: performance.now() });
          } else if (hasExited) {
            finish();
            reject(new Error(`process exited before printing ${pattern}${outputOf(proc)}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms${outputOf(proc)}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    stop(signal = "SIGTERM", timeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return proc.waitForExit(timeoutMs);
    },
    async waitForExit(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`still running after ${timeoutMs} ms${outputOf(proc)}`));
        }, timeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  live.add(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (killed after `timeoutMs`). */
export async function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; command?: string[]; timeoutMs?: number },
): Promise<CliResult> {
  const proc = spawnCli(args, options);
  const timeoutMs = options.timeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      proc.child.kill("SIGKILL");
      reject(
        new Error(`'${args.join(" ")}' did not finish within ${timeoutMs} ms${outputOf(proc)}`),
      );
    }, timeoutMs);
  });
  try {
    const exit = await Promise.race([proc.exited, timeout]);
    return { code: exit.code, stdout: proc.stdout(), stderr: proc.stderr() };
  } finally {
    clearTimeout(timer);
  }
}

/** Parses JSON printed on stdout, with the output in the error when it does not parse. */
export function parseJsonOutput<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not JSON (exit ${result.code}):${outputOf({
        stdout: () => result.stdout,
        stderr: () => result.stderr,
      })}`,
    );
  }
}

/** The start-up banner, as printed by `startGateway` with HOST defaulting to 127.0.0.1. */
export const BANNER = /^Switchyard listening on (http:\/\/127\.0\.0\.1:(\d+))$/;
/** A line that is a whole API key and nothing else. */
export const KEY_LINE = /^sk-[0-9A-Za-z]{40,}$/;

export interface GatewayProcess {
  proc: CliProcess;
  url: string;
  port: number;
  /** Milliseconds from spawn to the banner line. */
  bannerAfterMs: number;
}

/**
 * `node bin/switchyard.js start` with PORT=0 in `cwd`; resolves once the banner and the
 * summary line under it are out (so every line of the banner, key included, has been printed).
 * SIGTERM stops it without a drain delay unless `env` sets SWITCHYARD_DRAIN_DELAY_SECONDS.
 */
export async function startGatewayProcess(
  cwd: string,
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const proc = spawnCli(["start"], {
    cwd,
    env: cleanEnv({ PORT: "0", SWITCHYARD_DRAIN_DELAY_SECONDS: "0", ...env }),
  });
  const banner = await proc.waitForLine(BANNER, 20_000);
  await proc.waitForLine(/^ {2}\d+ models; database /, 5_000);
  const match = BANNER.exec(banner.line);
  return {
    proc,
    url: match?.[1] ?? "",
    port: Number(match?.[2]),
    bannerAfterMs: banner.at - proc.startedAt,
  };
}

/** Reads a whole SSE body and returns its `data:` payloads in order. */
export function sseData(body: string): string[] {
  return body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
}
