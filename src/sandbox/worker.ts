/**
 * @module sandbox/worker
 * The sandbox inside a worker thread (started by `isolated.ts` through `worker-entry.mjs`):
 * listens where `workerData` says, reports `{type: "listening", url, port}` (or `failed`) to
 * the parent, and on `{type: "close"}` closes the server and ends the thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startSandbox } from "./server.ts";

export interface WorkerStart {
  host: string;
  port: number;
}

export type WorkerReport =
  | { type: "listening"; url: string; port: number }
  | { type: "failed"; message: string };

export type WorkerCommand = { type: "close" };

const port = parentPort;
if (!port) throw new Error("sandbox/worker.ts runs only as a worker thread");
const report = (message: WorkerReport) => port.postMessage(message);
const { host, port: listenPort } = workerData as WorkerStart;

try {
  const sandbox = await startSandbox({ host, port: listenPort });
  port.on("message", (command: WorkerCommand) => {
    if (command.type !== "close") return;
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  report({ type: "listening", url: sandbox.url, port: sandbox.port });
} catch (error) {
  report({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
