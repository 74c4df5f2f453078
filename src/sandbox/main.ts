/**
 * @module sandbox/main
 * Stand-alone entry: `tsx src/sandbox/main.ts [--port N] [--host H]` starts the sandbox, prints
 * its URL and closes it on SIGINT/SIGTERM. (`switchyard sandbox` calls `startSandbox` itself.)
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { startSandbox } from "./server.ts";

export interface SandboxArgs {
  port: number;
  host: string;
}

/** Parses `--port N` (default 0: a free port) and `--host H` (default 127.0.0.1). */
export function parseSandboxArgs(argv: readonly string[]): SandboxArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: { port: { type: "string", short: "p" }, host: { type: "string" } },
    strict: true,
  });
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer 0-65535, got '${values.port}'`);
  }
  return { port, host: values.host ?? "127.0.0.1" };
}

export async function main(argv: readonly string[]): Promise<void> {
  const sandbox = await startSandbox(parseSandboxArgs(argv));
  console.log(`Switchyard sandbox listening on ${sandbox.url}`);
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
