/**
 * @module cli/start-workers
 * `switchyard start --workers N` (or `server.workers`): N gateway processes on one port, with
 * `node:cluster`. The primary does the one-time work first — it opens the database (migrating
 * it) and creates the first admin on an empty one, printing its key once — so the workers never
 * race for it; then it forks the workers, which share the listening socket, prints one banner
 * once all listen, forwards SIGTERM/SIGINT (each worker drains as a single process does) and
 * SIGHUP (reload) to them, and replaces a worker that dies. Workers that keep failing (five
 * exits within a minute) make it give up with exit 1.
 * SQLite serves one process, so more than one worker needs PostgreSQL (exit 2 otherwise).
 * Each worker gets its own billing instance id (`<id>-w<n>` when `billing.instance_id` is set),
 * so the in-flight recovery of each is its own.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import type { Config } from "../config/index.ts";
import { deriveConfig } from "../ops/reload.ts";
import { describeDatabaseUrl } from "../store/index.ts";
import { EXIT, usage } from "./exit.ts";

/** The message a worker sends once it listens. */
export interface WorkerListening {
  type: "switchyard:listening";
  url: string;
}

const RESTART_DELAY_MS = 1_000;
const GIVE_UP_EXITS = 5;
const GIVE_UP_WINDOW_MS = 60_000;

/** The worker count: `--workers`, else `server.workers` (`auto`: one per CPU). */
export function workerCount(flag: string | undefined, config: Config): number {
  const raw = flag ?? String(config.server.workers);
  if (raw === "auto") return availableParallelism();
  const count = Number(raw);
  if (!/^\d+$/.test(raw) || count < 1 || count > 64) {
    throw usage(`--workers must be an integer 1-64 or 'auto', got '${raw}'`);
  }
  return count;
}

/** Refuses more than one worker on SQLite, which serves one process. */
export function checkWorkerStore(count: number, config: Config): void {
  if (count > 1 && describeDatabaseUrl(config.database_url).dialect === "sqlite") {
    throw usage(
      `${count} workers need PostgreSQL: a SQLite database serves one process. Set DATABASE_URL=postgres://… or run one worker.`,
    );
  }
}

/** The primary: prepares the database, runs `count` workers, and returns the exit code. */
export async function runPrimary(
  count: number,
  config: Config,
  env: Record<string, string | undefined>,
  print: (line: string) => void,
): Promise<number> {
  const { prepareDatabase, createLogger, startSharedSandbox } = await import("../main.ts");
  const logger = createLogger(config.log_level);
  const bootstrapKey = await prepareDatabase(config, env, logger);
  // One sandbox for all: a video task submitted through one worker is polled by another.
  const sandbox = await startSharedSandbox(config, env, logger);
  const workerEnv = {
    ...(sandbox ? { SWITCHYARD_SANDBOX_URL: sandbox.url } : {}),
  };

  let stopping: NodeJS.Signals | undefined;
  let exitCode: number = EXIT.ok;
  const failures: number[] = [];
  const alive = new Set<number>();
  const listening = new Map<number, string>();
  let announced = false;
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => {
    done = resolve;
  });
  const workers = () => Object.values(cluster.workers ?? {}).filter((each) => each !== undefined);
  /** Signals reach workers as messages: see `listenToPrimary`. */
  const tell = (signal: NodeJS.Signals) => {
    const message: PrimarySignal = { type: "switchyard:signal", signal };
    for (const each of workers()) if (each.isConnected()) each.send(message);
  };

  const fork = (index: number): Worker => {
    const worker = cluster.fork({ ...workerEnv, SWITCHYARD_WORKER_INDEX: String(index) });
    alive.add(index);
    worker.on("message", (message: WorkerListening) => {
      if (message?.type !== "switchyard:listening") return;
      // A worker forked just before a stop signal may have missed it: it hears it now.
      if (stopping) {
        const stop: PrimarySignal = { type: "switchyard:signal", signal: stopping };
        if (worker.isConnected()) worker.send(stop);
        return;
      }
      listening.set(index, message.url);
      if (announced || listening.size < count) return;
      announced = true;
      print(`Switchyard listening on ${message.url}`);
      print(
        `  ${count} workers (pids ${workers()
          .map((each) => each.process.pid)
          .join(", ")}); database postgres`,
      );
      if (bootstrapKey) {
        print("First start: created the admin account admin@localhost. Its API key (shown once):");
        print(bootstrapKey);
      }
    });
    worker.on("exit", (code, signal) => {
      alive.delete(index);
      listening.delete(index);
      if (stopping) {
        // A worker killed by a signal (code null: the OOM killer, a kill -9) did not drain
        // cleanly either: its requests were cut without their settlement.
        if (code !== 0) {
          exitCode = EXIT.failure;
          logger.error({ worker: index, code, signal }, "worker did not stop cleanly");
        }
        if (alive.size === 0) done(exitCode);
        return;
      }
      const now = Date.now();
      failures.push(now);
      while (failures.length > 0 && failures[0]! < now - GIVE_UP_WINDOW_MS) failures.shift();
      if (failures.length >= GIVE_UP_EXITS) {
        logger.fatal({ exits: failures.length }, "workers keep exiting: giving up");
        stopping = "SIGTERM";
        exitCode = EXIT.failure;
        tell("SIGTERM");
        if (alive.size === 0) done(exitCode);
        return;
      }
      logger.error(
        { worker: index, code, signal, restartInMs: RESTART_DELAY_MS },
        "worker exited unexpectedly: starting a new one",
      );
      setTimeout(() => {
        if (!stopping) fork(index);
      }, RESTART_DELAY_MS);
    });
    return worker;
  };

  let stopSignals = 0;
  const forward = (signal: NodeJS.Signals) => {
    if (signal !== "SIGHUP" && ++stopSignals >= 3) {
      // A third stop signal stops everything at once, as it stops a single process.
      logger.warn({ signal }, "third stop signal: stopping the workers at once");
      for (const each of workers()) each.process.kill("SIGKILL");
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    }
    // A second stop signal is passed on too: it ends the workers' drain delay.
    if (signal !== "SIGHUP" && !stopping) {
      stopping = signal;
      logger.info({ signal }, "stopping the workers");
      if (alive.size === 0) done(exitCode);
    }
    tell(signal);
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, forward);
  for (let index = 0; index < count; index++) fork(index);
  const code = await finished;
  if (bootstrapKey && !announced) {
    // The admin exists now: a first start that failed never hides its only key.
    print("First start: created the admin account admin@localhost, but the workers did not start.");
    print("Its API key (shown once):");
    print(bootstrapKey);
  }
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(signal, forward);
  await sandbox?.close();
  return code;
}

/**
 * In a worker: the configuration with this worker's own instance id. A reload derives the
 * configuration it reads the same way, so the suffix is not a change that takes a restart.
 */
export function workerConfig(config: Config, index: number): Config {
  return deriveConfig(config, (read) => {
    const id = read.billing.instance_id;
    return id === undefined
      ? read
      : { ...read, billing: { ...read.billing, instance_id: `${id}-w${index}` } };
  });
}

/** A signal the primary passes on to its workers. */
export interface PrimarySignal {
  type: "switchyard:signal";
  signal: NodeJS.Signals;
}

/**
 * In a worker: takes signals from the primary only. A stop from systemd or a terminal reaches
 * the whole process group, and a worker that heard it directly and again from the primary
 * would take the second for "end the drain delay". A primary that is gone (its channel closed)
 * stops the worker too. Returns the function that stops listening.
 */
export function listenToPrimary(onSignal: (signal: NodeJS.Signals) => void): () => void {
  const ignore = () => {};
  const fromPrimary = (message: PrimarySignal) => {
    if (message?.type === "switchyard:signal") onSignal(message.signal);
  };
  const orphaned = () => onSignal("SIGTERM");
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, ignore);
  process.on("message", fromPrimary);
  process.once("disconnect", orphaned);
  return () => {
    process.off("message", fromPrimary);
    process.off("disconnect", orphaned);
  };
}

/** In a worker: tells the primary it listens. */
export function announceListening(url: string): void {
  const message: WorkerListening = { type: "switchyard:listening", url };
  process.send?.(message);
}

export const isWorker = () => cluster.isWorker;
