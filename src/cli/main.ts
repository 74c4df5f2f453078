/**
 * @module cli/main
 * The `switchyard` command: `start`, `sandbox`, `accounts ...`, `keys ...`, `ledger verify`.
 * Management commands work directly on the configured database.
 */
import { parseArgs } from "node:util";
import { ConfigError } from "../config/index.ts";
import { runAccountsCommand, runKeysCommand, runLedgerCommand } from "./manage.ts";

export const HELP = `Switchyard — a self-hostable AI gateway

Usage: switchyard <command> [options]

Commands:
  start                         Start the gateway (PORT, HOST, DATABASE_URL, switchyard.yaml)
  sandbox [--port N] [--host H] Start the provider sandbox on its own
  accounts list                 List accounts
  accounts create --email E [--password P] [--admin] [--balance-micros N]
  accounts credit <id> --amount-micros N --reason R   (negative amount debits)
  keys list --account <id>      List an account's keys
  keys create --account <id> [--name N] [--models a,b] [--rpm N] [--concurrency N] [--expires-at ISO]
  keys revoke <key-id>          Revoke a key
  ledger verify                 Check every balance equals the sum of its ledger

Options:
  -h, --help                    Show this help

Configuration: see README.md and docs/configuration.md.`;

async function runStart(): Promise<number> {
  const { startGateway } = await import("../main.ts");
  const gateway = await startGateway();
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      gateway.services.logger.info({ signal }, "draining in-flight requests");
      void gateway.close().then(resolve);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}

async function runSandbox(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" } },
  });
  const { startSandbox } = await import("../sandbox/server.ts");
  const sandbox = await startSandbox({
    port: values.port ? Number(values.port) : 8090,
    host: values.host ?? "127.0.0.1",
  });
  process.stdout.write(`Switchyard sandbox listening on ${sandbox.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await sandbox.close();
  return 0;
}

export async function runCli(
  argv: string[],
  out: (line: string) => void = console.log,
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case "-h":
      case "--help":
      case "help":
        out(HELP);
        return 0;
      case "start":
        return await runStart();
      case "sandbox":
        return await runSandbox(rest);
      case "accounts":
        return await runAccountsCommand(rest, out);
      case "keys":
        return await runKeysCommand(rest, out);
      case "ledger":
        return await runLedgerCommand(rest, out);
      default:
        console.error(`Unknown command '${command}'.\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    if (
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      console.error((error as Error).message);
      return 2;
    }
    console.error(error instanceof Error ? error.message : error);
    return 1;
  }
}
