/**
 * The precompiled build: `npm run build` (scripts/build.mjs, also run by `npm ci`) compiles the
 * sources into dist/, and the CLI (bin/switchyard.js) runs dist/ only while it is current, else
 * the sources through tsx. The end-to-end case builds into a folder of its own, laid out like a
 * checkout without src/ (as in the container image), and serves from it.
 */
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BUILD_STAMP, chooseEntry } from "../bin/entry.js";
import {
  BANNER,
  cleanEnv,
  KEY_LINE,
  killLeftovers,
  makeTempDir,
  REPO_ROOT,
  removeTempDirs,
  spawnCli,
} from "./support/cli-process.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

/** Sets a file's modification time to `seconds` after the epoch. */
function touch(path: string, seconds: number): void {
  utimesSync(path, seconds, seconds);
}

describe("which code the CLI runs", () => {
  function checkout(): string {
    const root = makeTempDir("switchyard-entry-");
    mkdirSync(join(root, "src", "core"), { recursive: true });
    writeFileSync(join(root, "src", "main.ts"), "");
    writeFileSync(join(root, "src", "core", "model-call.ts"), "");
    touch(join(root, "src", "main.ts"), 1_000);
    touch(join(root, "src", "core", "model-call.ts"), 1_000);
    return root;
  }
  function build(root: string, at: number): void {
    mkdirSync(join(root, "dist"), { recursive: true });
    writeFileSync(join(root, "dist", BUILD_STAMP), "");
    touch(join(root, "dist", BUILD_STAMP), at);
  }

  it("runs the sources when there is no build, or the build never finished (no stamp)", () => {
    const root = checkout();
    expect(chooseEntry(root, undefined)).toBe("sources");
    mkdirSync(join(root, "dist"));
    writeFileSync(join(root, "dist", "main.js"), "");
    expect(chooseEntry(root, undefined)).toBe("sources");
  });

  it("runs the build while it is at least as new as every source", () => {
    const root = checkout();
    build(root, 2_000);
    expect(chooseEntry(root, undefined)).toBe("build");
    expect(chooseEntry(root, "")).toBe("build");
  });

  it("runs the sources once any source, however deep, changed after the build", () => {
    const root = checkout();
    build(root, 2_000);
    touch(join(root, "src", "core", "model-call.ts"), 3_000);
    expect(chooseEntry(root, undefined)).toBe("sources");
  });

  it("runs the build where there are no sources (the container image)", () => {
    const root = makeTempDir("switchyard-entry-");
    build(root, 2_000);
    expect(chooseEntry(root, undefined)).toBe("build");
  });

  it("does what SWITCHYARD_RUN says, and refuses any other value", () => {
    const root = checkout();
    build(root, 2_000);
    expect(chooseEntry(root, "sources")).toBe("sources");
    touch(join(root, "src", "main.ts"), 3_000);
    expect(chooseEntry(root, "build")).toBe("build");
    expect(() => chooseEntry(root, "dist")).toThrow(/SWITCHYARD_RUN must be "sources" or "build"/);
  });
});

describe("the precompiled build", { timeout: 120_000 }, () => {
  /** A checkout without src/: the build, the CLI, and links to what the build reads. */
  let buildBegan = 0;
  function builtCheckout(): string {
    const root = makeTempDir("switchyard-built-");
    buildBegan = Date.now();
    const built = spawnSync(
      process.execPath,
      [join(REPO_ROOT, "scripts", "build.mjs"), "--out-dir", join(root, "dist")],
      { encoding: "utf8" },
    );
    expect(built.status, built.stdout + built.stderr).toBe(0);
    mkdirSync(join(root, "bin"));
    for (const file of ["switchyard.js", "entry.js"])
      copyFileSync(join(REPO_ROOT, "bin", file), join(root, "bin", file));
    for (const linked of ["node_modules", "catalog", "console", "package.json"])
      symlinkSync(join(REPO_ROOT, linked), join(root, linked));
    return root;
  }
  let root = "";

  it("compiles every module but the tests, importing .js files only, and stamps the build", () => {
    root = builtCheckout();
    const dist = join(root, "dist");
    // Dated when the build began, before any output: a source saved while tsc ran is newer.
    const stamped = statSync(join(dist, BUILD_STAMP)).mtimeMs;
    expect(stamped).toBeGreaterThanOrEqual(buildBegan - 1_000);
    expect(stamped).toBeLessThanOrEqual(statSync(join(dist, "cli", "main.js")).mtimeMs);
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" });
    const modules = files.filter((file) => file.endsWith(".js"));
    expect(modules).toContain(join("cli", "main.js"));
    expect(modules).toContain(join("sandbox", "worker.js"));
    expect(files.filter((file) => /\.test\.js$|test-kit\.js$|\.ts$/.test(file))).toEqual([]);
    const tsImports = modules.filter((file) =>
      /(?:from\s*|import\()\s*"\.{1,2}\/[^"]*\.ts"/.test(readFileSync(join(dist, file), "utf8")),
    );
    expect(tsImports).toEqual([]);
  });

  it("starts the gateway from the build and answers through the sandbox's worker", async () => {
    if (root === "") root = builtCheckout();
    const cwd = makeTempDir("switchyard-built-run-");
    const proc = spawnCli(["start"], {
      cwd,
      env: cleanEnv({ PORT: "0", SWITCHYARD_DRAIN_DELAY_SECONDS: "0" }),
      command: [process.execPath, join(root, "bin", "switchyard.js")],
    });
    const banner = await proc.waitForLine(BANNER, 30_000);
    const key = (await proc.waitForLine(KEY_LINE, 5_000)).line;
    const url = BANNER.exec(banner.line)?.[1] ?? "";
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hello from the build" }],
    });
    expect(reply.choices[0]?.message.content).toMatch(/^Sandbox reply to hello from the build/);
    expect(reply.usage?.completion_tokens).toBeGreaterThan(0);
    const exit = await proc.stop("SIGTERM", 10_000);
    expect(exit.code, proc.stderr()).toBe(0);
  });

  it("says what is wrong with SWITCHYARD_RUN and exits 1", async () => {
    if (root === "") root = builtCheckout();
    const proc = spawnCli(["--help"], {
      cwd: root,
      env: cleanEnv({ SWITCHYARD_RUN: "fast" }),
      command: [process.execPath, join(root, "bin", "switchyard.js")],
    });
    const exit = await proc.waitForExit(10_000);
    expect(exit.code).toBe(1);
    expect(proc.stderr()).toMatch(/SWITCHYARD_RUN must be "sources" or "build", not "fast"/);
  });
});
