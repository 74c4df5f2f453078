/**
 * @module bench/run
 * `npm run bench`: measures chat completions (non-stream and stream) against the sandbox called
 * directly, a bare undici pass-through proxy (the floor any Node gateway can reach), and
 * Switchyard with auth, quotas and billing on. Each server runs in its own process; the load
 * generator runs in this one, pinned to its own core or sharing all of them (bench/placement.ts;
 * both by default). The machine is shared and noisy, so the targets are measured in interleaved
 * rounds and every figure is the median over rounds; the ratio to the floor is taken within each
 * round, between measurements seconds apart. Prints the tables and writes
 * docs/performance-latest.md.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  chatBody,
  type LatencySample,
  type LoadResult,
  measureLoad,
  median,
  percentile,
  sampleLatency,
  type Target,
} from "./measure.ts";
import { type Placement, placeLoadGenerator, placementsToRun, serverCommand } from "./placement.ts";
import {
  type BenchShape,
  formatTables,
  gatewayCode,
  type Mode,
  type Summary,
  writeReport,
} from "./report.ts";
import { createLoadKey, GATEWAY_BANNER, LISTENING_BANNER, startServer } from "./servers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SHAPE: BenchShape = {
  seconds: Number(process.env.BENCH_SECONDS ?? 3),
  // The gateway's code takes several seconds of load to be compiled and settle (a 1-s probe of
  // its CPU per request: 1,276 µs in the first second, 300 in the fourth, ~200 from the tenth).
  warmup: Number(process.env.BENCH_WARMUP ?? 8),
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  latencyRounds: Number(process.env.BENCH_LATENCY_ROUNDS ?? 10),
  latencyRequests: Number(process.env.BENCH_LATENCY_REQUESTS ?? 100),
};
const ADMIN_KEY = `sk-${"Bench".repeat(10)}`;
/** `start --workers N` for the gateway (needs `BENCH_DATABASE_URL`, a PostgreSQL database). */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;
/** `BENCH_GATEWAY_NODE_FLAGS`: flags for the gateway's `node` (V8's heap sizes, say). */
const GATEWAY_NODE_FLAGS = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? "").split(" ").filter(Boolean);
/** `BENCH_FASTIFY=1`: the floor's work on Fastify too (`bench/fastify-proxy.ts`). */
const FASTIFY = process.env.BENCH_FASTIFY === "1";

function start(placement: Placement, args: string[], env: Record<string, string>, banner: RegExp) {
  const { command, args: fullArgs } = serverCommand(placement, args);
  return startServer(command, fullArgs, { cwd: ROOT, env, banner });
}

/** A round's CPU per request for the progress line. */
const cpuText = (result: LoadResult) =>
  result.cpuMicrosPerRequest === undefined ? "–" : `${Math.round(result.cpuMicrosPerRequest)} µs`;

async function measureMode(targets: Target[], mode: Mode): Promise<Summary[]> {
  const body = chatBody(mode === "stream");
  const { connections, seconds } = SHAPE;
  if (SHAPE.warmup > 0)
    for (const target of targets) await measureLoad(target, body, connections, SHAPE.warmup);
  const rounds: LoadResult[][] = [];
  for (let round = 0; round < SHAPE.rounds; round++) {
    const results: LoadResult[] = [];
    for (const target of targets)
      results.push(await measureLoad(target, body, connections, seconds));
    rounds.push(results);
    const detail = results
      .map(
        (result, index) =>
          `${targets[index]!.name}: ${Math.round(result.rps)}/s, ${cpuText(result)}`,
      )
      .join("; ");
    process.stdout.write(`  ${mode} round ${round + 1}/${SHAPE.rounds} done (${detail})\n`);
  }
  const latencies = targets.map(() => [] as LatencySample[]);
  for (let round = 0; round < SHAPE.latencyRounds; round++) {
    for (const [index, target] of targets.entries())
      latencies[index]!.push(...(await sampleLatency(target, body, SHAPE.latencyRequests)));
  }
  const floorIndex = targets.findIndex((target) => target.name.startsWith("floor"));
  return targets.map((target, index) => {
    const mine = rounds.map((results) => results[index]!);
    const cpu = mine.flatMap((result) =>
      result.cpuMicrosPerRequest === undefined ? [] : [result.cpuMicrosPerRequest],
    );
    const totals = latencies[index]!.map((sample) => sample.total);
    return {
      target: target.name,
      mode,
      rps: median(mine.map((result) => result.rps)),
      p50: median(mine.map((result) => result.p50)),
      p99: median(mine.map((result) => result.p99)),
      errors: mine.reduce((sum, result) => sum + result.errors, 0),
      cpu: cpu.length ? median(cpu) : undefined,
      cpuRange: cpu.length ? [Math.min(...cpu), Math.max(...cpu)] : undefined,
      ratio: median(rounds.map((results) => results[index]!.rps / results[floorIndex]!.rps)),
      idleP50: percentile(totals, 0.5),
      idleP99: percentile(totals, 0.99),
      idleFirstByte: median(latencies[index]!.map((sample) => sample.firstByte)),
    };
  });
}

/** Starts the sandbox, the floor and a gateway under `placement`, measures, and stops them. */
async function runPlacement(placement: Placement): Promise<string> {
  placeLoadGenerator(placement);
  process.stdout.write(`placement: ${placement}\n`);
  const children: ChildProcess[] = [];
  try {
    const sandbox = await start(
      placement,
      ["bin/switchyard.js", "sandbox", "--port", "0"],
      {},
      LISTENING_BANNER,
    );
    children.push(sandbox.child);
    const floor = await start(
      placement,
      [
        "--import",
        "tsx",
        "bench/floor-proxy.ts",
        "--port",
        "0",
        "--upstream",
        `${sandbox.url}/openai/v1`,
      ],
      {},
      LISTENING_BANNER,
    );
    children.push(floor.child);
    const fastify = FASTIFY
      ? await start(
          placement,
          [
            "--import",
            "tsx",
            "bench/fastify-proxy.ts",
            "--port",
            "0",
            "--upstream",
            `${sandbox.url}/openai/v1`,
          ],
          {},
          LISTENING_BANNER,
        )
      : undefined;
    if (fastify) children.push(fastify.child);
    const gateway = await start(
      placement,
      [...GATEWAY_NODE_FLAGS, "bin/switchyard.js", "start", "--workers", String(WORKERS)],
      {
        PORT: "0",
        LOG_LEVEL: "warn",
        DATABASE_URL:
          DATABASE_URL ?? join(mkdtempSync(join(tmpdir(), "switchyard-bench-")), "bench.sqlite"),
        SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
        SWITCHYARD_SANDBOX_URL: sandbox.url,
      },
      GATEWAY_BANNER,
    );
    children.push(gateway.child);
    const benchKey = await createLoadKey(gateway.url, ADMIN_KEY);
    // Under taskset the server is the child of `taskset`, which execs it: the same pid.
    const targets: Target[] = [
      {
        name: "sandbox (direct)",
        url: `${sandbox.url}/openai/v1/chat/completions`,
        key: "sk-bench",
        pid: sandbox.child.pid,
      },
      {
        name: "floor proxy (bare undici)",
        url: `${floor.url}/chat/completions`,
        key: "sk-bench",
        pid: floor.child.pid,
      },
      ...(fastify
        ? [
            {
              name: "fastify proxy (same work)",
              url: `${fastify.url}/chat/completions`,
              key: "sk-bench",
              pid: fastify.child.pid,
            },
          ]
        : []),
      {
        name: "switchyard",
        url: `${gateway.url}/v1/chat/completions`,
        key: benchKey,
        // With workers the requests are served by the primary's children: no CPU per request.
        ...(WORKERS === 1 ? { pid: gateway.child.pid } : {}),
      },
    ];
    const rows = [
      ...(await measureMode(targets, "non-stream")),
      ...(await measureMode(targets, "stream")),
    ];
    return formatTables(placement, rows, SHAPE);
  } finally {
    for (const child of children) child.kill("SIGTERM");
  }
}

async function main() {
  const sections: string[] = [];
  // Asked as each placement's gateway starts: an edit under src/ during a run would otherwise
  // make the report name the wrong code.
  const codes = new Set<"build" | "sources">();
  for (const placement of placementsToRun()) {
    codes.add(gatewayCode(ROOT));
    const tables = await runPlacement(placement);
    process.stdout.write(`\n${tables}\n\n`);
    sections.push(tables);
  }
  // The report is the default set-up's; a workers or PostgreSQL run only prints its tables.
  if (WORKERS === 1 && DATABASE_URL === undefined)
    writeReport(ROOT, sections, codes.has("sources") ? "sources" : "build");
}

await main();
