/**
 * @module bench/report
 * The tables and verdicts of `npm run bench`, per placement, against the targets of
 * docs/performance.md: JSON at least 75 % of the floor's requests/s with at most 0.3 ms added at
 * p50 one request at a time and at most 1.5 × its CPU per request; streams at least 65 % with
 * at most 0.3 ms added to the time to first byte and at most 2 × its CPU per request.
 */

import { writeFileSync } from "node:fs";
import { cpus as cpuList, totalmem as totalMemory } from "node:os";
import { join } from "node:path";
import { chooseEntry } from "../bin/entry.js";
import { describePlacement, type Placement } from "./placement.ts";

export type Mode = "non-stream" | "stream";

export interface Summary {
  target: string;
  mode: Mode;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpu?: number;
  /** The lowest and highest CPU µs per request of the rounds: the spread within one run. */
  cpuRange?: [number, number];
  /** Median over rounds of this target's requests/s divided by the floor's in the same round. */
  ratio: number;
  idleP50: number;
  idleP99: number;
  /** Median time to the first byte of the answer, one request at a time. */
  idleFirstByte: number;
}

/** The median CPU per request and, when the rounds differ, their range. */
function cpuCell(row: Summary): string {
  if (row.cpu === undefined) return "–";
  const range = row.cpuRange;
  return range && range[0] !== range[1] ? `${row.cpu} (${range[0]}–${range[1]})` : `${row.cpu}`;
}

export interface BenchShape {
  connections: number;
  /** Seconds of load each target gets before the first round, left out of every figure. */
  warmup: number;
  rounds: number;
  seconds: number;
  latencyRounds: number;
  latencyRequests: number;
}

const TARGETS = {
  "non-stream": { ratio: 0.75, addedMs: 0.3, cpuFactor: 1.5, latency: "p50" },
  stream: { ratio: 0.65, addedMs: 0.3, cpuFactor: 2, latency: "time to first byte" },
} as const;

const signed = (value: number, digits: number) =>
  `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;

function verdicts(rows: Summary[]): string[] {
  return (["non-stream", "stream"] as const).flatMap((mode) => {
    const gateway = rows.find((row) => row.target === "switchyard" && row.mode === mode);
    const floor = rows.find((row) => row.target.startsWith("floor") && row.mode === mode);
    if (!gateway || !floor) return [];
    const target = TARGETS[mode];
    const added =
      mode === "stream"
        ? gateway.idleFirstByte - floor.idleFirstByte
        : gateway.idleP50 - floor.idleP50;
    const cpuFactor = gateway.cpu !== undefined && floor.cpu ? gateway.cpu / floor.cpu : Number.NaN;
    const met = (ok: boolean) => (ok ? "met" : "NOT met");
    return [
      `- ${mode}: ${Math.round(gateway.ratio * 100)} % of the floor's requests/s (target ≥ ${target.ratio * 100} %): ${met(gateway.ratio >= target.ratio)}; ` +
        `${target.latency} added ${signed(added, 2)} ms (≤ ${target.addedMs} ms): ${met(added <= target.addedMs)}; ` +
        `CPU ${Number.isNaN(cpuFactor) ? "–" : `${cpuFactor.toFixed(2)} ×`} the floor's (≤ ${target.cpuFactor} ×): ${met(cpuFactor <= target.cpuFactor)}.`,
    ];
  });
}

export function formatTables(placement: Placement, rows: Summary[], shape: BenchShape): string {
  const floorOf = (row: Summary) =>
    rows.find((other) => other.mode === row.mode && other.target.startsWith("floor"))!;
  return [
    `### ${placement === "pinned" ? "Pinned" : "Shared"}: ${describePlacement(placement)}`,
    "",
    `Under load (${shape.connections} connections, median of ${shape.rounds} rounds of ${shape.seconds} s after ${shape.warmup} s of warm-up):`,
    "",
    "| target | mode | requests/s | vs floor | p50 ms | p99 ms | errors | CPU µs/request (rounds' range) |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.target} | ${row.mode} | ${row.rps} | ${Math.round(row.ratio * 100)} % | ${row.p50} | ${row.p99} | ${row.errors} | ${cpuCell(row)} |`,
    ),
    "",
    `One request at a time (${shape.latencyRounds} interleaved rounds × ${shape.latencyRequests} requests each):`,
    "",
    "| target | mode | p50 ms | p99 ms | p50 added | first byte ms | first byte added |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.target} | ${row.mode} | ${row.idleP50.toFixed(2)} | ${row.idleP99.toFixed(2)} | ${signed(row.idleP50 - floorOf(row).idleP50, 2)} ms | ${row.idleFirstByte.toFixed(2)} | ${signed(row.idleFirstByte - floorOf(row).idleFirstByte, 2)} ms |`,
    ),
    "",
    "Against the targets:",
    "",
    ...verdicts(rows),
  ].join("\n");
}

/** Which code `switchyard start` runs now; asked before the servers start (see `writeReport`). */
export function gatewayCode(root: string): "build" | "sources" {
  return chooseEntry(root, process.env.SWITCHYARD_RUN);
}

/** Writes the report; `code` is what the gateway ran, as `gatewayCode` said when it started. */
export function writeReport(root: string, sections: string[], code: "build" | "sources"): void {
  const ran =
    code === "build"
      ? "the precompiled build (dist/)"
      : "its TypeScript sources through tsx (no current build: `npm run build`)";
  const cpu = cpuList()[0]?.model ?? "unknown CPU";
  const machine = `${cpuList().length} × ${cpu}, ${Math.round(totalMemory() / 2 ** 30)} GiB, Node ${process.version}`;
  const path = join(root, "docs", "performance-latest.md");
  const only = process.env.BENCH_PLACEMENT
    ? ` Only the ${process.env.BENCH_PLACEMENT} placement ran (\`BENCH_PLACEMENT\`).`
    : "";
  writeFileSync(
    path,
    `# Latest benchmark run\n\nWritten by \`npm run bench\` on ${new Date().toISOString()}.\n\n` +
      `Machine: ${machine}. Every server in its own process, the load generator in the bench ` +
      `process. The gateway ran ${ran}.${only}\n\n${sections.join("\n\n")}\n`,
  );
  process.stdout.write(`\nwritten to ${path}\n`);
}
