/**
 * @module sandbox/connection
 * Timing and connection control for fault injection: a close signal per response, sleeps that
 * stop when the client goes away, and cutting a connection on purpose.
 */
import type { ServerResponse } from "node:http";

/** An AbortSignal that fires when the response's connection closes (client gone or finished). */
export function closeSignal(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (response.destroyed) controller.abort();
  else response.once("close", () => controller.abort());
  return controller.signal;
}

/** Waits `ms`; resolves true when the time passed, false as soon as the signal fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves when the signal fires (used by `hang`). */
export function untilClosed(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

/** Writes and resolves once flushed to the socket: true on success, false if the client is gone. */
export function writeFlushed(response: ServerResponse, data: string): Promise<boolean> {
  if (response.destroyed || response.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => response.write(data, (error) => resolve(!error)));
}
