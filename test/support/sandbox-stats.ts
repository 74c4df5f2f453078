/** Reads the sandbox's request counters (see src/sandbox/admin-routes.ts). */
export interface SandboxCounters {
  requests: number;
  completed: number;
  aborted: number;
  dropped: number;
  open: number;
}

export async function sandboxStats(sandboxUrl: string | undefined): Promise<SandboxCounters> {
  if (!sandboxUrl) throw new Error("no sandbox running");
  const response = await fetch(`${sandboxUrl}/__sandbox/stats`);
  return (await response.json()) as SandboxCounters;
}

export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
