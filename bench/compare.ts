/**
 * @module bench/compare
 * A/B comparison of two checkouts: one sandbox, one gateway per checkout, both loaded at the
 * same time by their own load generator, so both see the same machine state. Prints each
 * gateway's requests/s and CPU time per request for every round; the ratio of the two CPU
 * figures is stable to a few percent even on a noisy machine, unlike separate runs.
 *
 *   node --import tsx bench/compare.ts <checkout-a> <checkout-b>
 *
 * Each checkout needs its `node_modules` (a symlink to this one's will do). Knobs:
 * `COMPARE_ROUNDS` (default 8), `COMPARE_SECONDS` (4), `COMPARE_CONNECTIONS` (16 per gateway),
 * `COMPARE_STREAM=1` for streamed requests.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon from "autocannon";
import { chatBody, cpuMicros } from "./measure.ts";

const ADMIN_KEY = `sk-${"Compare".repeat(7)}`;
const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 8);
const SECONDS = Number(process.env.COMPARE_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.COMPARE_CONNECTIONS ?? 16);
const STREAM = process.env.COMPARE_STREAM === "1";

interface Server {
  child: ChildProcess;
  url: string;
}

interface Gateway extends Server {
  checkout: string;
  key: string;
}

function start(cwd: string, args: string[], env: Record<string, string>, banner: RegExp) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise<Server>((resolveStart, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = banner.exec(output);
      if (match) resolveStart({ child, url: match[1]! });
    });
    child.on("exit", (code) => reject(new Error(`${cwd}: exited with ${code}\n${output}`)));
  });
}

async function adminPost(url: string, body: unknown): Promise<{ id: string; key: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`${url}: ${response.status}`);
  return (await response.json()) as { id: string; key: string };
}

async function startGateway(checkout: string, sandboxUrl: string): Promise<Gateway> {
  const server = await start(
    checkout,
    ["bin/switchyard.js", "start"],
    {
      PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: join(mkdtempSync(join(tmpdir(), "switchyard-compare-")), "compare.sqlite"),
      SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
      SWITCHYARD_SANDBOX_URL: sandboxUrl,
    },
    /Switchyard listening on (http:\/\/\S+)/,
  );
  const account = await adminPost(`${server.url}/v1/admin/accounts`, {
    email: "compare@example.com",
    balance_micros: 1_000_000_000_000,
  });
  const key = await adminPost(`${server.url}/v1/admin/accounts/${account.id}/keys`, {
    name: "compare",
    rpm: 10_000_000,
    concurrency: 1_000,
  });
  return { ...server, checkout, key: key.key };
}

function load(gateway: Gateway, seconds: number) {
  return autocannon({
    url: `${gateway.url}/v1/chat/completions`,
    method: "POST",
    connections: CONNECTIONS,
    duration: seconds,
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.key}` },
    body: chatBody(STREAM),
  });
}

async function main() {
  const checkouts = process.argv.slice(2).map((path) => resolve(path));
  if (checkouts.length !== 2) {
    process.stderr.write("usage: node --import tsx bench/compare.ts <checkout-a> <checkout-b>\n");
    return 2;
  }
  const sandbox = await start(
    checkouts[0]!,
    ["bin/switchyard.js", "sandbox", "--port", "0"],
    {},
    /listening on (http:\/\/\S+)/,
  );
  const gateways: Gateway[] = [];
  try {
    for (const checkout of checkouts) gateways.push(await startGateway(checkout, sandbox.url));
    await Promise.all(gateways.map((gateway) => load(gateway, 2))); // warm-up
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const before = gateways.map((gateway) => cpuMicros(gateway.child.pid) ?? 0);
      const results = await Promise.all(gateways.map((gateway) => load(gateway, SECONDS)));
      const perRequest = results.map((result, index) =>
        Math.round(
          ((cpuMicros(gateways[index]!.child.pid) ?? 0) - before[index]!) /
            Math.max(1, result.requests.total),
        ),
      );
      ratios.push(perRequest[1]! / perRequest[0]!);
      const cells = results.map(
        (result, index) =>
          `${Math.round(result.requests.average)} req/s, ${perRequest[index]} µs/request` +
          (result.non2xx > 0 ? `, ${result.non2xx} non-2xx` : ""),
      );
      process.stdout.write(`round ${round}: A ${cells[0]} | B ${cells[1]}\n`);
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    process.stdout.write(`B / A CPU per request, median of ${ROUNDS}: ${median.toFixed(3)}\n`);
    return 0;
  } finally {
    for (const server of [...gateways, sandbox]) server.child.kill("SIGTERM");
  }
}

process.exitCode = await main();
