// `npm run build`, also run by `npm ci` (`prepare`): compiles src/ (tests left out) into dist/
// with tsc (tsconfig.build.json), file for file at the same depth, so paths relative to a module
// (the catalog, package.json, the console) resolve the same from both. The stamp dist/BUILD is
// written last; bin/switchyard.js runs dist/ only while the stamp is newer than every source.
// A production install (`npm ci --omit=dev`) has no TypeScript: it skips the build, and the CLI
// runs the sources through tsx. `--out-dir DIR` builds elsewhere (the build's own test).
import { spawnSync } from "node:child_process";
import { rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const outFlag = process.argv.indexOf("--out-dir");
const outArg = outFlag === -1 ? "dist" : process.argv[outFlag + 1];
// The folder is emptied first: never the checkout itself or a folder above it.
if (
  !outArg ||
  root.startsWith(`${resolve(root, outArg)}${sep}`) ||
  resolve(root, outArg) === root
) {
  console.error(`build: --out-dir needs a folder of its own, not "${outArg ?? ""}"`);
  process.exit(2);
}
const dist = resolve(root, outArg);
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  console.log("build skipped: TypeScript is not installed; the CLI runs the sources through tsx");
  process.exit(0);
}
const started = performance.now();
const startedAt = Date.now();
rmSync(dist, { recursive: true, force: true });
const result = spawnSync(
  process.execPath,
  [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", dist],
  {
    cwd: root,
    stdio: "inherit",
  },
);
if (result.status !== 0) {
  // Half a build is never run: without the stamp the CLI keeps to the sources.
  rmSync(dist, { recursive: true, force: true });
  console.error(`build failed (tsc exited with ${result.status ?? result.signal})`);
  process.exit(1);
}
// The stamp carries the time the build started: a source saved while tsc ran is newer than the
// stamp, so the CLI runs the sources until the next build rather than a build without it.
const stamp = join(dist, "BUILD");
writeFileSync(stamp, `${new Date(startedAt).toISOString()}\n`);
utimesSync(stamp, startedAt / 1000, startedAt / 1000);
console.log(`built ${dist} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
