/**
 * @module bench/run
 * `npm run bench`: measures chat completions (non-stream and stream) against the sandbox called
 * directly, a bare undici pass-through proxy (the floor any Node gateway can reach), and
 * Switchyard with auth, quotas and billing on. Each server runs in its own process; the load
 * generator runs in this one. The machine is shared and noisy, so the targets are measured in
 * interleaved rounds and every figure is the median over rounds; the ratio to the floor is taken
 * within each round, between measurements seconds apart. Prints the tables and writes
 * docs/performance-latest.md.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus as cpuList, tmpdir, totalmem as totalMemory } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  chatBody,
  type LoadResult,
  measureLoad,
  median,
  percentile,
  sampleLatency,
  type Target,
} from "./measure.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LATENCY_ROUNDS = Number(process.env.BENCH_LATENCY_ROUNDS ?? 10);
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 100);
const ADMIN_KEY = `sk-${"Bench".repeat(10)}`;
const TARGET_RATIO = 0.7;
/** `start --workers N` for the gateway (needs `BENCH_DATABASE_URL`, a PostgreSQL database). */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;
const TARGET_ADDED_P50_MS = 1;

function start(args: string[], env: Record<string, string>, banner: RegExp) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = banner.exec(output);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited with ${code}: ${output}`)),
    );
  });
}

type Mode = "non-stream" | "stream";

interface Summary {
  target: string;
  mode: Mode;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpu?: number;
  /** Median over rounds of this target's requests/s divided by the floor's in the same round. */
  ratio: number;
  idleP50: number;
  idleP99: number;
}

async function measureMode(targets: Target[], mode: Mode): Promise<Summary[]> {
  const body = chatBody(mode === "stream");
  for (const target of targets) await measureLoad(target, body, CONNECTIONS, 2); // warm-up
  const rounds: LoadResult[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const results: LoadResult[] = [];
    for (const target of targets)
      results.push(await measureLoad(target, body, CONNECTIONS, SECONDS));
    rounds.push(results);
    process.stdout.write(`  ${mode} round ${round + 1}/${ROUNDS} done\n`);
  }
  const latencies = targets.map(() => [] as number[]);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const [index, target] of targets.entries())
      latencies[index]!.push(...(await sampleLatency(target, body, LATENCY_REQUESTS)));
  }
  const floorIndex = targets.findIndex((target) => target.name.startsWith("floor"));
  return targets.map((target, index) => {
    const mine = rounds.map((results) => results[index]!);
    const cpu = mine.flatMap((result) =>
      result.cpuMicrosPerRequest === undefined ? [] : [result.cpuMicrosPerRequest],
    );
    return {
      target: target.name,
      mode,
      rps: median(mine.map((result) => result.rps)),
      p50: median(mine.map((result) => result.p50)),
      p99: median(mine.map((result) => result.p99)),
      errors: mine.reduce((sum, result) => sum + result.errors, 0),
      cpu: cpu.length ? median(cpu) : undefined,
      ratio: median(rounds.map((results) => results[index]!.rps / results[floorIndex]!.rps)),
      idleP50: percentile(latencies[index]!, 0.5),
      idleP99: percentile(latencies[index]!, 0.99),
    };
  });
}

function formatTables(rows: Summary[]): string {
  const floorOf = (row: Summary) =>
    rows.find((other) => other.mode === row.mode && other.target.startsWith("floor"))!;
  const signed = (value: number, digits: number) =>
    `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;
  const load = [
    `Under load (${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${SECONDS} s):`,
    "",
    "| target | mode | requests/s | vs floor | p50 ms | p99 ms | errors | CPU µs/request |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.target} | ${row.mode} | ${row.rps} | ${Math.round(row.ratio * 100)} % | ${row.p50} | ${row.p99} | ${row.errors} | ${row.cpu ?? "–"} |`,
    ),
  ];
  const idle = [
    `One request at a time (${LATENCY_ROUNDS} interleaved rounds × ${LATENCY_REQUESTS} requests each):`,
    "",
    "| target | mode | p50 ms | p99 ms | p50 added to floor |",
    "|---|---|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.target} | ${row.mode} | ${row.idleP50.toFixed(2)} | ${row.idleP99.toFixed(2)} | ${signed(row.idleP50 - floorOf(row).idleP50, 2)} ms |`,
    ),
  ];
  const gateway = rows.find((row) => row.target === "switchyard" && row.mode === "non-stream")!;
  const added = gateway.idleP50 - floorOf(gateway).idleP50;
  const verdict = [
    `Non-stream requests/s vs floor: ${Math.round(gateway.ratio * 100)} % (target ≥ ${TARGET_RATIO * 100} %): ${gateway.ratio >= TARGET_RATIO ? "met" : "NOT met"}.`,
    `Non-stream p50 added to the floor: ${signed(added, 2)} ms (target ≤ ${TARGET_ADDED_P50_MS} ms): ${added <= TARGET_ADDED_P50_MS ? "met" : "NOT met"}.`,
  ];
  return [...load, "", ...idle, "", ...verdict].join("\n");
}

function writeReport(tables: string): void {
  const cpu = cpuList()[0]?.model ?? "unknown CPU";
  const machine = `${cpuList().length} × ${cpu}, ${Math.round(totalMemory() / 2 ** 30)} GiB, Node ${process.version}`;
  const path = join(ROOT, "docs", "performance-latest.md");
  writeFileSync(
    path,
    `# Latest benchmark run\n\nWritten by \`npm run bench\` on ${new Date().toISOString()}.\n\n` +
      `Machine: ${machine}. Every server in its own process, the load generator in the bench ` +
      `process, all on the same cores.\n\n${tables}\n`,
  );
  process.stdout.write(`\nwritten to ${path}\n`);
}

/**
 * A user with a balance and a key whose quotas are on (limits high enough not to refuse the
 * benchmark's load), so every request pays for the rate window, the concurrency lease and the hold.
 */
async function createQuotaKey(gatewayUrl: string): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(gatewayUrl + path, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (response.status !== 201)
      throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { id: string; key: string };
  };
  const account = await call("/v1/admin/accounts", {
    email: "bench@example.com",
    balance_micros: 1_000_000_000_000,
  });
  const key = await call(`/v1/admin/accounts/${account.id}/keys`, {
    name: "bench",
    rpm: 10_000_000,
    concurrency: 1_000,
  });
  return key.key;
}

async function main() {
  const children: ChildProcess[] = [];
  try {
    const sandbox = await start(
      ["bin/switchyard.js", "sandbox", "--port", "0"],
      {},
      /listening on (http:\/\/\S+)/,
    );
    children.push(sandbox.child);
    const floor = await start(
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
      /listening on (http:\/\/\S+)/,
    );
    children.push(floor.child);
    const gateway = await start(
      ["bin/switchyard.js", "start", "--workers", String(WORKERS)],
      {
        PORT: "0",
        LOG_LEVEL: "warn",
        DATABASE_URL:
          DATABASE_URL ?? join(mkdtempSync(join(tmpdir(), "switchyard-bench-")), "bench.sqlite"),
        SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
        SWITCHYARD_SANDBOX_URL: sandbox.url,
      },
      /Switchyard listening on (http:\/\/\S+)/,
    );
    children.push(gateway.child);
    const benchKey = await createQuotaKey(gateway.url);
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
    const tables = formatTables(rows);
    process.stdout.write(`\n${tables}\n`);
    // The report is the default set-up's; a workers or PostgreSQL run only prints its tables.
    if (WORKERS === 1 && DATABASE_URL === undefined) writeReport(tables);
  } finally {
    for (const child of children) child.kill("SIGTERM");
  }
}

await main();
