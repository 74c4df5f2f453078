/**
 * @module sandbox/isolated
 * The sandbox off the caller's event loop: `startSandboxIsolated` runs the sandbox server in a
 * worker thread (`worker-entry.mjs` → `worker.ts`, or `worker.js` when built) with a bounded
 * heap, so no request to the sandbox (a huge prompt, many large pictures) can stall the process
 * that started it. A worker that dies (e.g. out of memory) is replaced on the same port; `close`
 * ends the thread.
 */
import { Worker } from "node:worker_threads";
import type { SandboxOptions } from "./server.ts";
import type { WorkerCommand, WorkerReport, WorkerStart } from "./worker.ts";

/**
 * The worker's entry: from the sources, a bootstrap that registers tsx first (a worker starts
 * without the parent's module hooks); from the precompiled build, the compiled module itself.
 */
const ENTRY = import.meta.url.endsWith(".ts")
  ? new URL("./worker-entry.mjs", import.meta.url)
  : new URL("./worker.js", import.meta.url);
/** Default heap of the worker: enough for 32 MiB bodies and the request log, no more. */
const DEFAULT_HEAP_MB = 1024;
/** Time a worker has to close its server before it is terminated. */
const CLOSE_GRACE_MS = 5_000;
/** Replacements in a row that may fail before the sandbox gives up. */
const MAX_RESTART_FAILURES = 5;

export interface IsolatedSandboxOptions extends SandboxOptions {
  /** Heap limit of the worker thread, in MiB (1024 by default). */
  heapLimitMb?: number;
  /** Told when a worker died and is being replaced, or could not be replaced. */
  onWorkerExit?: (event: { exitCode: number; error?: Error; restarted: boolean }) => void;
}

export interface IsolatedSandbox {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:49152`. */
  url: string;
  port: number;
  /** Stops the server and ends the worker thread; idempotent. */
  close(): Promise<void>;
}

interface Started {
  worker: Worker;
  url: string;
  port: number;
}

/** Starts one worker and waits until its server listens (or fails to). */
function startWorker(start: WorkerStart, heapLimitMb: number): Promise<Started> {
  const worker = new Worker(ENTRY, {
    workerData: start,
    resourceLimits: { maxOldGenerationSizeMb: heapLimitMb },
  });
  return new Promise((resolve, reject) => {
    const settle = () => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    const onMessage = (report: WorkerReport) => {
      settle();
      if (report.type === "listening") {
        resolve({ worker, url: report.url, port: report.port });
      } else {
        void worker.terminate();
        reject(new Error(`sandbox did not start: ${report.message}`));
      }
    };
    const onError = (error: Error) => {
      settle();
      void worker.terminate();
      reject(error);
    };
    const onExit = (code: number) => {
      settle();
      reject(new Error(`sandbox worker exited with code ${code} before listening`));
    };
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
  });
}

/** Ends a worker: asks it to close its server, terminates it if it takes too long. */
async function stopWorker(worker: Worker): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  const command: WorkerCommand = { type: "close" };
  worker.postMessage(command);
  const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Starts the sandbox in a worker thread; same address rules as `startSandbox`. */
export async function startSandboxIsolated(
  options: IsolatedSandboxOptions = {},
): Promise<IsolatedSandbox> {
  const host = options.host ?? "127.0.0.1";
  const heapLimitMb = options.heapLimitMb ?? DEFAULT_HEAP_MB;
  let current: Worker | undefined;
  let starting: Promise<unknown> | undefined;
  let pending: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;

  const first = await startWorker({ host, port: options.port ?? 0 }, heapLimitMb);
  const { url, port } = first;

  const replace = (failures: number) => {
    pending = setTimeout(
      () => {
        pending = undefined;
        starting = startWorker({ host, port }, heapLimitMb).then(watch, (error: Error) => {
          if (closing) return;
          const restarted = failures + 1 < MAX_RESTART_FAILURES;
          options.onWorkerExit?.({ exitCode: 1, error, restarted });
          if (restarted) replace(failures + 1);
        });
      },
      100 * 2 ** failures,
    );
  };

  function watch(started: Started): Promise<void> | undefined {
    const worker = started.worker;
    current = worker;
    let error: Error | undefined;
    // Without a listener, a worker's error would be thrown in this (the gateway's) thread.
    worker.on("error", (thrown: Error) => {
      error = thrown;
    });
    worker.once("exit", (exitCode) => {
      if (current === worker) current = undefined;
      if (closing) return;
      options.onWorkerExit?.({ exitCode, ...(error ? { error } : {}), restarted: true });
      replace(0);
    });
    // A replacement that came up while the sandbox was closing is ended at once.
    return closing ? stopWorker(worker) : undefined;
  }
  watch(first);

  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        if (pending) clearTimeout(pending);
        await starting;
        if (current) await stopWorker(current);
      })();
      return closing;
    },
  };
}
