/**
 * @module bench/placement
 * Where the bench's processes run. `shared`: every server and the load generator on all cores,
 * as the scheduler likes. `pinned`: the load generator (this process, every thread) on core 0
 * and every server on the other cores (`taskset`), so the load generator's own CPU use does not
 * disturb the servers it measures. Pinning needs Linux's `taskset` and at least two cores.
 */
import { execFileSync } from "node:child_process";
import { cpus } from "node:os";

export type Placement = "shared" | "pinned";

const CORES = cpus().length;

function hasTaskset(): boolean {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The placements to run: `BENCH_PLACEMENT` (shared, pinned or both), else both when possible. */
export function placementsToRun(requested = process.env.BENCH_PLACEMENT): Placement[] {
  const pinnable = CORES >= 2 && hasTaskset();
  if (requested === "shared") return ["shared"];
  if (requested === "pinned") {
    if (!pinnable) throw new Error("pinned placement needs taskset and at least two cores");
    return ["pinned"];
  }
  return pinnable ? ["pinned", "shared"] : ["shared"];
}

const allCores = `0-${CORES - 1}`;
const serverCores = `1-${CORES - 1}`;

/** Moves this process (every thread, so autocannon's sockets too) for a placement. */
export function placeLoadGenerator(placement: Placement): void {
  if (!hasTaskset()) return;
  const cores = placement === "pinned" ? "0" : allCores;
  execFileSync("taskset", ["-a", "-p", "-c", cores, String(process.pid)], { stdio: "ignore" });
}

/** The command and arguments that start a server process under a placement. */
export function serverCommand(
  placement: Placement,
  args: string[],
): { command: string; args: string[] } {
  if (placement === "shared") return { command: process.execPath, args };
  return { command: "taskset", args: ["-c", serverCores, process.execPath, ...args] };
}

export function describePlacement(placement: Placement): string {
  return placement === "pinned"
    ? `load generator on core 0, every server on cores ${serverCores}`
    : `every server and the load generator on all ${CORES} cores`;
}
