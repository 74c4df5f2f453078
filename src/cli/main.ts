/**
 * @module cli/main
 * The `switchyard` command: `start`, `sandbox`, `accounts ...`, `keys ...`, `ledger verify`, `audit`,
 * `--version` and `--help` (also per command, which never starts anything). Management commands
 * work directly on the configured database. Exit codes: see `exit.ts`.
 */
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { parseArgs } from "node:util";
import { describeListenError } from "../ops/listen-error.ts";
import { EXIT, endQuietlyOnBrokenPipe, exitCodeOf, usage } from "./exit.ts";
import { COMMAND_HELP, HELP } from "./help.ts";

export { HELP } from "./help.ts";

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** `--help` or `-h` among a command's arguments (before a `--`). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

async function runStart(args: string[]): Promise<number> {
  let flags: { workers?: string | undefined };
  try {
    flags = parseArgs({ args, options: { workers: { type: "string" } } }).values;
  } catch {
    throw usage(
      `start takes only --workers N, got '${args.join(" ")}'. Configure it with switchyard.yaml or the environment (PORT, HOST, DATABASE_URL, ...).`,
    );
  }
  const workers = await import("./start-workers.ts");
  if (!workers.isWorker()) {
    const { loadConfig } = await import("../config/index.ts");
    const config = loadConfig();
    const count = workers.workerCount(flags.workers, config);
    workers.checkWorkerStore(count, config);
    if (count > 1) {
      return workers.runPrimary(count, config, process.env, (line) =>
        process.stdout.write(`${line}\n`),
      );
    }
  }
  // Listen for signals before starting, so a signal that arrives during start-up (or right after
  // the banner) is handled once the gateway is up instead of killing the process: the first stop
  // signal ends a wait for the database (nothing started, exit 0), or else stops the gateway as
  // soon as it is up (a start-up that fails exits anyway); a third stop signal stops the process
  // at once, as it does a running gateway.
  const pending: NodeJS.Signals[] = [];
  const stopSignals: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];
  // A stop signal while start-up waits for its database ends the wait: nothing is started.
  const stopStart = new AbortController();
  let onSignal: (signal: NodeJS.Signals) => void = (signal) => {
    pending.push(signal);
    if (signal !== "SIGHUP") stopStart.abort();
    if (pending.filter((each) => each !== "SIGHUP").length >= 3) stopAtOnce(signal);
  };
  const listener = (signal: NodeJS.Signals) => onSignal(signal);
  const stopListening = workers.isWorker() ? workers.listenToPrimary(listener) : () => {};
  if (!workers.isWorker())
    for (const signal of [...stopSignals, "SIGHUP" as const]) process.on(signal, listener);
  const { startGateway } = await import("../main.ts");
  const { StoppedWhileWaiting } = await import("../ops/open-store.ts");
  const gateway = await (workers.isWorker()
    ? startWorker(workers, stopStart.signal)
    : startGateway({ stop: stopStart.signal })
  ).catch((error: unknown) => {
    if (!(error instanceof StoppedWhileWaiting)) throw error;
    process.stderr.write(`${error.message}\n`);
    return undefined;
  });
  if (!gateway) {
    stopListening();
    return EXIT.ok;
  }
  await new Promise<void>((resolve, reject) => {
    let stopSignalsSeen = 0;
    onSignal = (signal) => {
      if (signal === "SIGHUP") {
        if (stopSignalsSeen === 0) gateway.reload();
        return;
      }
      stopSignalsSeen += 1;
      if (stopSignalsSeen > 1) {
        // A second signal ends the drain delay; a third one stops the process at once.
        gateway.skipDrainDelay();
        for (const stop of stopSignals) process.off(stop, listener);
        return;
      }
      gateway.services.logger.info({ signal }, "draining in-flight requests");
      const drainDelaySeconds =
        signal === "SIGTERM" ? gateway.services.config.server.drain_delay_seconds : 0;
      // A failed close surfaces as exit code 1 through runCli, not as an unhandled rejection.
      gateway.close({ drainDelaySeconds }).then(resolve, reject);
    };
    for (const signal of pending.splice(0)) onSignal(signal);
  });
  // A worker's channel to its primary would keep the process alive after the drain.
  stopListening();
  if (workers.isWorker()) process.disconnect?.();
  return EXIT.ok;
}

/** A third stop signal while starting: exits at once, 128 + the signal's number (130 for SIGINT). */
function stopAtOnce(signal: NodeJS.Signals): never {
  process.stderr.write(`third stop signal (${signal}) while starting: stopping at once\n`);
  process.exit(128 + (constants.signals[signal] ?? constants.signals.SIGTERM));
}

/** One of the `--workers` processes: its own instance id, no banner (the primary prints it). */
async function startWorker(workers: typeof import("./start-workers.ts"), stop: AbortSignal) {
  const { startGateway } = await import("../main.ts");
  const { loadConfig } = await import("../config/index.ts");
  const index = Number(process.env.SWITCHYARD_WORKER_INDEX ?? "0");
  const config = workers.workerConfig(loadConfig(), index);
  const gateway = await startGateway({ config, print: () => {}, stop });
  workers.announceListening(gateway.url);
  return gateway;
}

async function runSandbox(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" } },
  });
  const port = values.port === undefined ? 8090 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? "8090") || port > 65535) {
    throw usage(`--port must be an integer 0-65535, got '${values.port}'`);
  }
  const host = values.host ?? "127.0.0.1";
  const { startSandbox } = await import("../sandbox/server.ts");
  const sandbox = await startSandbox({ port, host }).catch((error: unknown) => {
    throw describeListenError(error, host, port);
  });
  process.stdout.write(`Switchyard sandbox listening on ${sandbox.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await sandbox.close();
  return EXIT.ok;
}

/** Runs one command; `out` takes stdout lines. Returns the exit code (see `exit.ts`). */
export async function runCli(
  argv: string[],
  out: (line: string) => void = console.log,
): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "start" && command !== "sandbox") endQuietlyOnBrokenPipe();
  try {
    switch (command) {
      case undefined:
      case "-h":
      case "--help":
        out(HELP);
        return EXIT.ok;
      case "help": {
        const topic = rest[0];
        out(topic !== undefined && COMMAND_HELP[topic] ? COMMAND_HELP[topic] : HELP);
        return EXIT.ok;
      }
      case "-v":
      case "--version":
      case "version":
        out(`switchyard ${version()}`);
        return EXIT.ok;
    }
    if (COMMAND_HELP[command] !== undefined && asksForHelp(rest)) {
      out(COMMAND_HELP[command]);
      return EXIT.ok;
    }
    switch (command) {
      case "start":
        return await runStart(rest);
      case "sandbox":
        return await runSandbox(rest);
      // Commands load their modules on demand, so `--help` and typos answer at once.
      case "accounts":
        return await (await import("./manage.ts")).runAccountsCommand(rest, out);
      case "keys":
        return await (await import("./manage.ts")).runKeysCommand(rest, out);
      case "ledger":
        return await (await import("./manage.ts")).runLedgerCommand(rest, out);
      case "audit":
        return await (await import("./audit.ts")).runAuditCommand(rest, out);
      default:
        console.error(`Unknown command '${command}'.\n\n${HELP}`);
        return EXIT.usage;
    }
  } catch (error) {
    const code = exitCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    const help =
      code === EXIT.usage &&
      !(error instanceof Error && error.name === "ConfigError") &&
      command !== undefined &&
      COMMAND_HELP[command] !== undefined
        ? `\nRun 'switchyard ${command} --help' for usage.`
        : "";
    console.error(`${message}${help}`);
    return code;
  }
}
