#!/usr/bin/env node
// The CLI: runs the precompiled build (dist/) when it is current, else the TypeScript sources
// through tsx, so a checkout works with or without a build step (bin/entry.js).
import { fileURLToPath } from "node:url";
import { chooseEntry } from "./entry.js";

const root = fileURLToPath(new URL("..", import.meta.url));
let cli;
try {
  cli =
    chooseEntry(root, process.env.SWITCHYARD_RUN) === "build"
      ? await import("../dist/cli/main.js")
      : await runSources();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const code = await cli.runCli(process.argv.slice(2));
// A failed command ends the process even if something it started still holds the event loop
// (e.g. a start that failed half-way); a successful one exits once everything has closed.
if (code !== 0) process.exit(code);
process.exitCode = code;

async function runSources() {
  const { register } = await import("tsx/esm/api");
  register();
  return import("../src/cli/main.ts");
}
