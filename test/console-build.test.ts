/**
 * The committed console build (`console/dist`) is what `console/build.ts` makes from
 * `console/src` today, and stays small. After changing the console: `npm run console:build`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole, type ConsoleBuild, DEFAULT_OUT } from "../console/build.ts";

/** Gzip bytes of the console's JavaScript and CSS together; docs/console.md names the budget. */
const GZIP_BUDGET_BYTES = 60 * 1024;

function filesUnder(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full));
    }
  };
  walk(dir);
  return files;
}

describe("console build", () => {
  let out: string;
  let built: ConsoleBuild;
  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "switchyard-console-"));
    built = await buildConsole(out);
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("console/dist is current (run `npm run console:build` after changing console/src)", () => {
    const fresh = filesUnder(out);
    const committed = filesUnder(DEFAULT_OUT);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, bytes] of fresh) {
      expect(committed.get(path)?.equals(bytes), `${path} differs`).toBe(true);
    }
  });

  it("names hashed assets from index.html with no inline script or style", () => {
    const html = readFileSync(join(out, "index.html"), "utf8");
    expect(built.script).toMatch(/^assets\/main-[0-9a-f]{10}\.js$/);
    expect(built.style).toMatch(/^assets\/main-[0-9a-f]{10}\.css$/);
    expect(html).toContain(`<script type="module" src="/console/${built.script}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/console/${built.style}">`);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });

  it("loads uPlot on demand, by its hashed name", () => {
    expect(built.chart).toMatch(/^assets\/uplot-chart-[0-9a-f]{10}\.js$/);
    const main = readFileSync(join(out, built.script), "utf8");
    expect(main.includes(`"/console/${built.chart}"`)).toBe(true);
    // a class name only uPlot's code carries
    expect(main.includes("u-cursor-x")).toBe(false);
    expect(readFileSync(join(out, built.chart), "utf8").includes("u-cursor-x")).toBe(true);
  });

  it(`keeps the JavaScript and CSS under ${GZIP_BUDGET_BYTES / 1024} KB gzipped`, () => {
    const gzipped = [built.script, built.style, built.chart].reduce(
      (sum, path) => sum + gzipSync(readFileSync(join(out, path)), { level: 9 }).length,
      0,
    );
    expect(gzipped).toBeGreaterThan(5 * 1024);
    expect(gzipped).toBeLessThan(GZIP_BUDGET_BYTES);
  });
});
