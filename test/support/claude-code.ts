/**
 * @module test/support/claude-code
 * The Claude Code CLI (`@anthropic-ai/claude-code`) for end-to-end tests. It is proprietary, so
 * it is never a dependency of this project: it is installed on demand with npm into a cache
 * folder shared across runs (`<tmpdir>/switchyard-claude-code/<version>`), and run in print mode
 * with a throw-away HOME, no traffic but the API calls, and only `ANTHROPIC_BASE_URL` and
 * `ANTHROPIC_AUTH_TOKEN` pointing it at a gateway.
 *
 * `SWITCHYARD_CLAUDE_CODE_VERSION` picks another version (or a dist-tag such as `latest`) than
 * the pinned one the tests were written against.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliResult, cleanEnv, runCli } from "./cli-process.ts";

export const CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code";
/** The version the Claude Code tests were written against (its tool order, its requests). */
export const CLAUDE_CODE_VERSION = process.env.SWITCHYARD_CLAUDE_CODE_VERSION || "2.1.330";
export const CLAUDE_CODE_CACHE = join(tmpdir(), "switchyard-claude-code");

const isWindows = process.platform === "win32";

function tail(text: string, length = 3000): string {
  return text.length > length ? `…${text.slice(-length)}` : text;
}

/** Runs npm (inheriting the environment, so registry, proxy and CA settings apply). */
function npm(args: string[], timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(isWindows ? "npm.cmd" : "npm", args, {
      env: { ...process.env, npm_config_update_notifier: "false" },
      stdio: ["ignore", "pipe", "pipe"],
      shell: isWindows,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (signal) stderr += `\n(npm killed by ${signal} after ${timeoutMs} ms)`;
      resolve({ code, stdout, stderr });
    });
  });
}

function registryError(what: string, result: CliResult): Error {
  return new Error(
    `Could not ${what} from the npm registry. The Claude Code end-to-end test installs the CLI ` +
      "on demand and needs the registry (CI can reach it; check the network, proxy or " +
      `npm configuration).\nnpm exited with ${result.code}:\n${tail(result.stderr || result.stdout)}`,
  );
}

/** An exact version for a dist-tag (`latest`, `stable`) or range; exact versions as they are. */
async function exactVersion(version: string): Promise<string> {
  if (/^\d+\.\d+\.\d+$/.test(version)) return version;
  const result = await npm(["view", `${CLAUDE_CODE_PACKAGE}@${version}`, "version"], 120_000);
  const resolved = result.stdout.trim().split(/\s+/).at(-1)?.replace(/^'|'$/g, "") ?? "";
  if (result.code !== 0 || !/^\d+\.\d+\.\d+/.test(resolved)) {
    throw registryError(`resolve ${CLAUDE_CODE_PACKAGE}@${version}`, result);
  }
  return resolved;
}

/**
 * The native executable of an install: the wrapper's `bin/claude.exe` once its postinstall has
 * copied the platform binary over it, else the per-platform package's binary directly (when npm
 * ran without install scripts). Each candidate must print the expected version.
 */
function findBinary(prefix: string, version: string): string | undefined {
  const scope = join(prefix, "node_modules", "@anthropic-ai");
  if (!existsSync(scope)) return undefined;
  const candidates = [join(scope, "claude-code", "bin", "claude.exe")];
  for (const name of readdirSync(scope)) {
    if (!name.startsWith("claude-code-")) continue;
    candidates.push(join(scope, name, isWindows ? "claude.exe" : "claude"));
  }
  const home = mkdtempSync(join(tmpdir(), "switchyard-claude-home-"));
  try {
    for (const candidate of candidates) {
      if (!existsSync(candidate)) continue;
      const probe = spawnSync(candidate, ["--version"], {
        env: cleanEnv({ HOME: home, DISABLE_AUTOUPDATER: "1" }),
        encoding: "utf8",
        timeout: 60_000,
      });
      if (probe.status === 0 && probe.stdout.includes(version)) return candidate;
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return undefined;
}

/**
 * Installs Claude Code (once per version; later runs reuse the cached install) and returns the
 * path of its executable. Fails with a clear message when the registry cannot be reached.
 */
export async function installClaudeCode(
  version = CLAUDE_CODE_VERSION,
): Promise<{ binary: string; version: string }> {
  const exact = await exactVersion(version);
  const prefix = join(CLAUDE_CODE_CACHE, exact);
  const cached = findBinary(prefix, exact);
  if (cached) return { binary: cached, version: exact };

  // Install into a fresh sibling folder and move it into place, so an interrupted install never
  // looks like a cached one and two runs installing at once do not mix their files.
  mkdirSync(CLAUDE_CODE_CACHE, { recursive: true });
  const staging = mkdtempSync(join(CLAUDE_CODE_CACHE, `${exact}.partial-`));
  try {
    await writeFile(join(staging, "package.json"), '{ "private": true }\n');
    const result = await npm(
      [
        "install",
        "--prefix",
        staging,
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        "--loglevel=error",
        `${CLAUDE_CODE_PACKAGE}@${exact}`,
      ],
      300_000,
    );
    if (result.code !== 0) throw registryError(`install ${CLAUDE_CODE_PACKAGE}@${exact}`, result);
    if (!findBinary(staging, exact)) {
      throw new Error(
        `${CLAUDE_CODE_PACKAGE}@${exact} installed, but no native executable for ` +
          `${process.platform}-${process.arch} answers --version.\n${tail(result.stderr)}`,
      );
    }
    rmSync(prefix, { recursive: true, force: true });
    try {
      renameSync(staging, prefix);
    } catch (error) {
      // Another run moved its install into place first; use that one.
      if (!findBinary(prefix, exact)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const binary = findBinary(prefix, exact);
  if (!binary) throw new Error(`Claude Code ${exact} is not usable in ${prefix}`);
  return { binary, version: exact };
}

/** The JSON printed by `claude -p … --output-format json` (fields the tests read). */
export interface ClaudeResult {
  type: "result";
  subtype: string;
  is_error: boolean;
  result: string;
  num_turns: number;
  stop_reason?: string | null;
  [field: string]: unknown;
}

/**
 * The environment of a Claude Code run against a gateway: a throw-away HOME, no auto-update,
 * telemetry, error reporting or other non-essential traffic, one retry, and the gateway as its
 * Anthropic API. Nothing else from the test runner's environment (no real Anthropic key).
 */
export function claudeCodeEnv(options: {
  home: string;
  baseUrl: string;
  token: string;
}): Record<string, string> {
  return cleanEnv({
    HOME: options.home,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_MAX_RETRIES: "1",
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_AUTH_TOKEN: options.token,
  });
}

/** `claude -p <prompt> --output-format json …args` in `cwd`; killed after `timeoutMs`. */
export function runClaudePrint(options: {
  binary: string;
  prompt: string;
  args?: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number;
}): Promise<CliResult> {
  return runCli(["-p", options.prompt, "--output-format", "json", ...(options.args ?? [])], {
    command: [options.binary],
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs ?? 120_000,
  });
}
