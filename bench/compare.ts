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
 * `COMPARE_STREAM=1` for streamed requests, `COMPARE_API=messages` for Anthropic messages on
 * their native route (`responses` for OpenAI responses, relayed natively), `COMPARE_MODEL` for
 * another model (a translated route, say), `COMPARE_WARMUP_SECONDS` (10). Then the latency one request at a time, A and B in turn:
 * `COMPARE_LATENCY_ROUNDS` (10, 0 to skip) rounds of `COMPARE_LATENCY_REQUESTS` (100).
 *
 * The whole comparison runs twice, the second time with the checkouts in each other's seat
 * (fresh gateways started in the other order): the second seat measured about 5 % more CPU than
 * the first for the same build, so one order alone can show a change that is not there. The
 * verdict combines both: the CPU ratio as the square root of B/A over the swapped run's A/B,
 * the latency as the mean of B − A and of the swapped run's. `COMPARE_ORDERS=1` runs one order.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon from "autocannon";
import { cpuMicros, loadApiNamed, loadRequest, median, sampleLatency } from "./measure.ts";
import {
  createLoadKey,
  GATEWAY_BANNER,
  LISTENING_BANNER,
  type Server,
  startServer,
} from "./servers.ts";

const ADMIN_KEY = `sk-${"Compare".repeat(7)}`;
const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 8);
const SECONDS = Number(process.env.COMPARE_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.COMPARE_CONNECTIONS ?? 16);
const STREAM = process.env.COMPARE_STREAM === "1";
const LOAD = loadRequest(
  loadApiNamed(process.env.COMPARE_API),
  STREAM,
  process.env.COMPARE_MODEL || undefined,
);
const WARMUP_SECONDS = Number(process.env.COMPARE_WARMUP_SECONDS ?? 10);
const LATENCY_ROUNDS = Number(process.env.COMPARE_LATENCY_ROUNDS ?? 10);
const LATENCY_REQUESTS = Number(process.env.COMPARE_LATENCY_REQUESTS ?? 100);
const ORDERS = process.env.COMPARE_ORDERS === "1" ? 1 : 2;

interface Gateway extends Server {
  checkout: string;
  key: string;
}

async function startGateway(checkout: string, sandboxUrl: string): Promise<Gateway> {
  const server = await startServer(process.execPath, ["bin/switchyard.js", "start"], {
    cwd: checkout,
    env: {
      PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: join(mkdtempSync(join(tmpdir(), "switchyard-compare-")), "compare.sqlite"),
      SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
      SWITCHYARD_SANDBOX_URL: sandboxUrl,
    },
    banner: GATEWAY_BANNER,
  });
  return { ...server, checkout, key: await createLoadKey(server.url, ADMIN_KEY) };
}

function load(gateway: Gateway, seconds: number) {
  return autocannon({
    url: `${gateway.url}${LOAD.path}`,
    method: "POST",
    connections: CONNECTIONS,
    duration: seconds,
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.key}` },
    body: LOAD.body,
  });
}

/**
 * One request at a time: rounds of sequential requests to A and to B in turn (the order swapped
 * every round), each round's p50 (of the first byte for streams), and the median over rounds of
 * B's p50 minus A's.
 */
async function compareLatency(gateways: Gateway[]): Promise<number> {
  const p50s: number[][] = gateways.map(() => []);
  const differences: number[] = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const roundP50: number[] = [];
    for (const index of order) {
      const gateway = gateways[index]!;
      const samples = await sampleLatency(
        { name: gateway.checkout, url: `${gateway.url}${LOAD.path}`, key: gateway.key },
        LOAD.body,
        LATENCY_REQUESTS,
      );
      roundP50[index] = median(samples.map((sample) => (STREAM ? sample.firstByte : sample.total)));
      p50s[index]!.push(roundP50[index]!);
    }
    differences.push(roundP50[1]! - roundP50[0]!);
  }
  const what = STREAM ? "first byte" : "answer";
  process.stdout.write(
    `one at a time (${LATENCY_ROUNDS} rounds × ${LATENCY_REQUESTS}), p50 of the ${what}: ` +
      `A ${median(p50s[0]!).toFixed(3)} ms, B ${median(p50s[1]!).toFixed(3)} ms; ` +
      `B − A, median of rounds: ${(median(differences) * 1000).toFixed(0)} µs\n`,
  );
  return median(differences);
}

/** What one order of the comparison measured: B/A CPU per request, B − A latency (ms). */
interface OrderResult {
  cpuRatio: number;
  latencyDifference?: number;
}

/** One order: `checkouts[0]` in the first seat, `checkouts[1]` in the second. */
async function compareOnce(checkouts: string[]): Promise<OrderResult> {
  const sandbox = await startServer(
    process.execPath,
    ["bin/switchyard.js", "sandbox", "--port", "0"],
    {
      cwd: checkouts[0]!,
      banner: LISTENING_BANNER,
    },
  );
  const gateways: Gateway[] = [];
  try {
    for (const checkout of checkouts) gateways.push(await startGateway(checkout, sandbox.url));
    // Warm-up: the tokenizer loads in the background after start and the JIT settles; the first
    // seconds of a new gateway cost several times its steady state per request.
    await Promise.all(gateways.map((gateway) => load(gateway, WARMUP_SECONDS)));
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
    process.stdout.write(
      `B / A CPU per request, median of ${ROUNDS}: ${median(ratios).toFixed(3)}\n`,
    );
    const cpuRatio = median(ratios);
    if (LATENCY_ROUNDS === 0) return { cpuRatio };
    return { cpuRatio, latencyDifference: await compareLatency(gateways) };
  } finally {
    for (const server of [...gateways, sandbox]) server.child.kill("SIGTERM");
  }
}

async function main() {
  const checkouts = process.argv.slice(2).map((path) => resolve(path));
  if (checkouts.length !== 2) {
    process.stderr.write("usage: node --import tsx bench/compare.ts <checkout-a> <checkout-b>\n");
    return 2;
  }
  process.stdout.write(`A = ${checkouts[0]}, B = ${checkouts[1]}\n`);
  const first = await compareOnce(checkouts);
  if (ORDERS === 1) return 0;
  process.stdout.write(`\nswapped seats: A = ${checkouts[1]}, B = ${checkouts[0]}\n`);
  const swapped = await compareOnce([checkouts[1]!, checkouts[0]!]);
  const cpu = Math.sqrt(first.cpuRatio / swapped.cpuRatio);
  let verdict = `\nboth orders, ${checkouts[1]} against ${checkouts[0]}: CPU per request ${cpu.toFixed(3)} ×`;
  if (first.latencyDifference !== undefined && swapped.latencyDifference !== undefined) {
    const added = ((first.latencyDifference - swapped.latencyDifference) / 2) * 1000;
    verdict += `, one at a time ${added >= 0 ? "+" : ""}${added.toFixed(0)} µs`;
  }
  process.stdout.write(`${verdict}\n`);
  return 0;
}

process.exitCode = await main();
