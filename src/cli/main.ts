/**
 * @module cli/main
 * The `switchyard` command: `start`, `sandbox`, `accounts ...`, `keys ...`, `ledger verify`.
 * Management commands work directly on the configured database.
 */
import { parseArgs } from "node:util";

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
  // Listen for signals before starting, so a SIGTERM that arrives during start-up (or right
  // after the banner) still shuts down cleanly instead of killing the process.
  let signalled: string | undefined;
  let onSignal: (signal: string) => void = (signal) => {
    signalled = signal;
  };
  process.once("SIGTERM", () => onSignal("SIGTERM"));
  process.once("SIGINT", () => onSignal("SIGINT"));
  const { startGateway } = await import("../main.ts");
  const gateway = await startGateway();
  await new Promise<void>((resolve, reject) => {
    onSignal = (signal: string) => {
      gateway.services.logger.info({ signal }, "draining in-flight requests");
      // A failed close surfaces as exit code 1 through runCli, not as an unhandled rejection.
      gateway.close().then(resolve, reject);
    };
    if (signalled) onSignal(signalled);
  });
  return 0;
}

async function runSandbox(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" } },
  });
  const port = values.port === undefined ? 8090 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? "8090") || port > 65535) {
    throw Object.assign(new Error(`--port must be an integer 0-65535, got '${values.port}'`), {
      code: "ERR_PARSE_ARGS_USAGE",
    });
  }
  const { startSandbox } = await import("../sandbox/server.ts");
  const sandbox = await startSandbox({ port, host: values.host ?? "127.0.0.1" });
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
      // Commands load their modules on demand, so `--help` and typos answer at once.
      case "accounts":
        return await (await import("./manage.ts")).runAccountsCommand(rest, out);
      case "keys":
        return await (await import("./manage.ts")).runKeysCommand(rest, out);
      case "ledger":
        return await (await import("./manage.ts")).runLedgerCommand(rest, out);
      default:
        console.error(`Unknown command '${command}'.\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    if (
      error instanceof Error &&
      (error.name === "ConfigError" ||
        (error as { code?: unknown }).code?.toString().startsWith("ERR_PARSE_ARGS"))
    ) {
      console.error(error.message);
      return 2;
    }
    console.error(error instanceof Error ? error.message : error);
    return 1;
  }
}
