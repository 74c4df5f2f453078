/**
 * @module bench/measure
 * The measurements of `npm run bench`: throughput under load (autocannon), latency at low load
 * (one request at a time, timed here with sub-millisecond resolution, which autocannon lacks),
 * and the CPU time a server process spends per request (from /proc on Linux).
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { Agent, request } from "undici";

export interface Target {
  name: string;
  url: string;
  key: string;
  /** The server process whose CPU time is charged to each request; absent for none. */
  pid?: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the target's process per request, in microseconds (Linux only). */
  cpuMicrosPerRequest?: number;
}

/**
 * Which API a load uses: OpenAI chat completions, Anthropic messages on its native route, or
 * OpenAI responses (on an OpenAI route: relayed natively).
 */
export type LoadApi = "chat" | "messages" | "responses";

/** `COMPARE_API`/`PROFILE_API` as a load API (chat when unset or unknown). */
export function loadApiNamed(name: string | undefined): LoadApi {
  return name === "messages" || name === "responses" ? name : "chat";
}

/**
 * The path and body of one request of `api`; `model` picks another catalog model (a chat
 * request to `claude-haiku-4-5`, say, is translated to the Anthropic protocol and back).
 */
export function loadRequest(
  api: LoadApi,
  stream: boolean,
  model?: string,
): { path: string; body: string } {
  if (api === "chat") return { path: "/v1/chat/completions", body: chatBody(stream, model) };
  if (api === "responses")
    return {
      path: "/v1/responses",
      body: JSON.stringify({
        model: model ?? "gpt-4o-mini",
        max_output_tokens: 64,
        stream,
        input: "Benchmark the gateway please",
      }),
    };
  return {
    path: "/v1/messages",
    body: JSON.stringify({
      model: model ?? "claude-haiku-4-5",
      max_tokens: 64,
      stream,
      messages: [{ role: "user", content: "Benchmark the gateway please" }],
    }),
  };
}

export function chatBody(stream: boolean, model = "gpt-4o-mini"): string {
  return JSON.stringify({
    model,
    max_tokens: 64,
    stream,
    messages: [{ role: "user", content: "Benchmark the gateway please" }],
  });
}

/** User + system CPU time of a process so far, in microseconds; undefined off Linux. */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

export async function measureLoad(
  target: Target,
  body: string,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const cpuBefore = cpuMicros(target.pid);
  const result = await autocannon({
    url: target.url,
    method: "POST",
    connections,
    duration: seconds,
    headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
    body,
  });
  const cpuAfter = cpuMicros(target.pid);
  const total = result.requests.total;
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cpuMicrosPerRequest:
      cpuBefore === undefined || cpuAfter === undefined || total === 0
        ? undefined
        : Math.round((cpuAfter - cpuBefore) / total),
  };
}

const probe = new Agent({ connections: 1, keepAliveTimeout: 30_000 });

export interface LatencySample {
  /** Until the whole answer was read, in milliseconds. */
  total: number;
  /** Until the first byte of the answer's body arrived, in milliseconds. */
  firstByte: number;
}

/** Sends `count` requests one after another and times each one. */
export async function sampleLatency(
  target: Target,
  body: string,
  count: number,
): Promise<LatencySample[]> {
  const samples: LatencySample[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const response = await request(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
      body,
      dispatcher: probe,
    });
    let firstByte = Number.NaN;
    for await (const _chunk of response.body)
      if (Number.isNaN(firstByte)) firstByte = performance.now() - started;
    if (response.statusCode !== 200)
      throw new Error(`${target.name} answered ${response.statusCode}`);
    samples.push({ total: performance.now() - started, firstByte });
  }
  return samples;
}

export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

export function median(values: number[]): number {
  return percentile(values, 0.5);
}
