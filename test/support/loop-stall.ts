/**
 * @module test/support/loop-stall
 * How long this thread's event loop was held while `work` ran: the largest gap between the
 * ticks of a 10 ms timer. A server running in the test's process (or anything else on this
 * thread) that blocks shows as a gap.
 */
export async function longestStall<T>(
  work: () => Promise<T>,
  /** How long to keep watching after `work`, for what it leaves running. */
  afterMs = 50,
): Promise<{ stallMs: number; result: T }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    return { stallMs, result };
  } finally {
    clearInterval(timer);
  }
}
