/**
 * @module bench/run
 * `npm run bench`: measures, in one run on this machine, chat completions (non-stream and
 * stream) against the sandbox called directly, a bare undici pass-through proxy (the floor),
 * and Switchyard with auth, quotas and billing on. Each server runs in its own process; the
 * load generator (autocannon) runs in this one. Prints a table and writes docs/performance.md.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus as cpuList, tmpdir, totalmem as totalMemory } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ADMIN_KEY = `sk-${"Bench".repeat(10)}`;

function start(
  args: string[],
  env: Record<string, string>,
  banner: RegExp,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
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

interface Row {
  target: string;
  mode: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(
  target: string,
  mode: "non-stream" | "stream",
  url: string,
  key: string,
): Promise<Row> {
  const body = JSON.stringify({
    model: target === "switchyard" ? "gpt-4o-mini" : "gpt-4o-mini",
    max_tokens: 64,
    stream: mode === "stream",
    messages: [{ role: "user", content: "Benchmark the gateway please" }],
  });
  const run = (duration: number) =>
    autocannon({
      url,
      method: "POST",
      connections: CONNECTIONS,
      duration,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body,
    });
  await run(2); // warm-up
  const result = await run(DURATION);
  return {
    target,
    mode,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
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
      ["bin/switchyard.js", "start"],
      {
        PORT: "0",
        LOG_LEVEL: "warn",
        DATABASE_URL: join(mkdtempSync(join(tmpdir(), "switchyard-bench-")), "bench.sqlite"),
        SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
        SWITCHYARD_SANDBOX_URL: sandbox.url,
      },
      /Switchyard listening on (http:\/\/\S+)/,
    );
    children.push(gateway.child);

    const rows: Row[] = [];
    for (const mode of ["non-stream", "stream"] as const) {
      rows.push(
        await measure(
          "sandbox (direct)",
          mode,
          `${sandbox.url}/openai/v1/chat/completions`,
          "sk-bench",
        ),
      );
      rows.push(
        await measure(
          "floor proxy (bare undici)",
          mode,
          `${floor.url}/chat/completions`,
          "sk-bench",
        ),
      );
      rows.push(await measure("switchyard", mode, `${gateway.url}/v1/chat/completions`, ADMIN_KEY));
    }
    const table = formatTable(rows);
    process.stdout.write(`\n${table}\n`);
    writeReport(table);
  } finally {
    for (const child of children) child.kill("SIGTERM");
  }
}

function formatTable(rows: Row[]): string {
  const lines = [
    "| target | mode | requests/s | p50 ms | p99 ms | errors | rps vs floor | p50 vs floor |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    const floor = rows.find((other) => other.mode === row.mode && other.target.startsWith("floor"));
    const ratio = floor ? `${Math.round((row.rps / floor.rps) * 100)} %` : "";
    const delta = floor
      ? `${row.p50 - floor.p50 >= 0 ? "+" : ""}${(row.p50 - floor.p50).toFixed(1)} ms`
      : "";
    lines.push(
      `| ${row.target} | ${row.mode} | ${row.rps} | ${row.p50} | ${row.p99} | ${row.errors} | ${ratio} | ${delta} |`,
    );
  }
  return lines.join("\n");
}

function writeReport(table: string): void {
  const cpu = cpuList()[0]?.model ?? "unknown CPU";
  const machine = `${cpuList().length} × ${cpu}, ${Math.round(totalMemory() / 2 ** 30)} GiB, Node ${process.version}`;
  const path = join(ROOT, "docs", "performance-latest.md");
  writeFileSync(
    path,
    `# Latest benchmark run\n\nWritten by \`npm run bench\` on ${new Date().toISOString()}.\n\nMachine: ${machine}. ` +
      `${CONNECTIONS} connections, ${DURATION} s per measurement after a 2 s warm-up; every server in its own process, ` +
      `autocannon in the bench process.\n\n${table}\n`,
  );
  process.stdout.write(`\nwritten to ${path}\n`);
}

await main();
