#!/usr/bin/env node
// Runs the TypeScript CLI directly (through tsx), so a checkout needs no build step.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
const code = await runCli(process.argv.slice(2));
// A failed command ends the process even if something it started still holds the event loop
// (e.g. a start that failed half-way); a successful one exits once everything has closed.
if (code !== 0) process.exit(code);
process.exitCode = code;
