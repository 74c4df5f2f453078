/**
 * @module test/support/healthz-probe
 * Polls `/healthz` while some work runs, to prove the work never stalls the gateway's event loop
 * (the gateway runs in the test's process, so a stall delays every probe).
 */
import { expect } from "vitest";

/** Polls `/healthz` every 20 ms while `work` runs (at least 3 times); returns the slowest answer. */
export async function slowestHealthz<T>(
  gateway: { url: string },
  work: () => Promise<T>,
): Promise<{ slowestMs: number; polls: number; result: T }> {
  let running = true;
  let slowestMs = 0;
  let polls = 0;
  const poller = (async () => {
    while (running || polls < 3) {
      const started = performance.now();
      const response = await fetch(`${gateway.url}/healthz`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      polls += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const result = await work();
    return { slowestMs, polls, result };
  } finally {
    running = false;
    await poller;
  }
}
