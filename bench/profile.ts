/**
 * @module bench/profile
 * `npm run bench:profile`: where a gateway's CPU goes under load. Starts the sandbox and a
 * gateway under `node --cpu-prof`, loads it with chat completions, stops it so the profile is
 * written, and prints the functions and the areas (Node itself, each package, each `src/`
 * folder) with the largest shares of its busy time, self and inclusive.
 *
 *   npm run bench:profile -- [json|stream] [seconds]
 *
 * `PROFILE_API=messages` loads Anthropic messages on their native route instead of chat
 * completions (`responses`: OpenAI responses, relayed natively); `PROFILE_MODEL` another model
 * (a translated route, say).
 *
 * `PROFILE_DATABASE_URL` runs the gateway on another database (a PostgreSQL one, say) instead of
 * a fresh SQLite file.
 *
 * The `.cpuprofile` file is kept (its path is printed) for Chrome's DevTools or speedscope.
 *
 * `PROFILE_HEAP=1` measures allocations instead of time: V8's sampling heap profiler over the
 * loaded seconds (`bench/heap-sampler.mjs`, collected objects counted), summarized as bytes
 * allocated per request, by function and by area; the `.heapprofile` file is kept.
 *
 * `PROFILE_GC=1` measures the garbage collector instead: the gateway runs with V8's
 * `--trace-gc-nvp`, and the young-generation collections (scavenges) and full collections
 * (mark-compact) of the loaded seconds are summed per request: bytes allocated, bytes that
 * survived a scavenge, bytes promoted to the old generation, and the pauses; `PROFILE_GC_LINES=1`
 * prints every collection besides. `PROFILE_HEAP=1 PROFILE_PROMOTED=1` keeps in the heap profile
 * only what a scavenge did not take (what was promoted). `PROFILE_NODE_FLAGS` passes flags to the
 * gateway's `node` (V8 flags, `--import` of a module to preload).
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { type LoadApi, loadApiNamed, loadRequest } from "./measure.ts";
import { createLoadKey, GATEWAY_BANNER, LISTENING_BANNER, startServer } from "./servers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ADMIN_KEY = `sk-${"Profile".repeat(7)}`;
const TOP = Number(process.env.PROFILE_TOP ?? 35);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface HeapNode {
  callFrame: ProfileNode["callFrame"];
  selfSize: number;
  children?: HeapNode[];
}

/** The numbers of one `--trace-gc-nvp` line (`gc=s` is a scavenge, `gc=mc` a mark-compact). */
function gcFields(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of line.split(" ")) {
    const at = part.indexOf("=");
    if (at > 0) fields.set(part.slice(0, at), part.slice(at + 1));
  }
  return fields;
}

/** Scavenges and mark-compacts of `lines` (`--trace-gc-nvp` output), per request. */
export function summarizeGc(lines: readonly string[], requests: number): string {
  const sums = {
    scavenges: 0,
    marks: 0,
    allocated: 0,
    survived: 0,
    promoted: 0,
    pause: 0,
    markPause: 0,
  };
  for (const line of lines) {
    const fields = gcFields(line);
    const number = (name: string) => Number(fields.get(name) ?? 0);
    if (fields.get("gc") === "s" || fields.get("gc") === "mmc") {
      sums.scavenges += 1;
      sums.allocated += number("allocated");
      sums.survived += number("new_space_survived");
      sums.promoted += number("promoted");
      sums.pause += number("pause");
    } else if (fields.get("gc") === "mc") {
      sums.marks += 1;
      sums.markPause += number("pause");
    }
  }
  const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(1)} KB`;
  const us = (ms: number) => `${((ms * 1000) / requests).toFixed(1)} µs`;
  return [
    `${requests} requests: ${sums.scavenges} scavenges, ${sums.marks} mark-compacts`,
    `per request: allocated ${kb(sums.allocated)}, survived a scavenge ${kb(sums.survived)}, ` +
      `promoted ${kb(sums.promoted)}`,
    `pauses per request: scavenges ${us(sums.pause)}, mark-compacts ${us(sums.markPause)} ` +
      "(on the main thread; concurrent marking and sweeping run on helper threads besides)",
  ].join("\n");
}

/** Bytes allocated per request, by function and by area, from a sampling heap profile. */
export function summarizeHeap(root: HeapNode, requests: number): string {
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes);
  let total = 0;
  const visit = (node: HeapNode) => {
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFunction, frameKey(node.callFrame), node.selfSize);
      add(byArea, areaOf(node.callFrame), node.selfSize);
    }
    for (const child of node.children ?? []) visit(child);
  };
  visit(root);
  const perRequest = (bytes: number) => `${(bytes / requests / 1024).toFixed(2)} KB`;
  const rows = (title: string, totals: Map<string, number>) =>
    [
      `\n${title}`,
      ...[...totals.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(
          ([key, bytes]) =>
            `${perRequest(bytes).padStart(10)}  ${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${key}`,
        ),
    ].join("\n");
  return [
    `allocated ${perRequest(total)} per request (${requests} requests)`,
    rows("allocated per request by area", byArea),
    rows("allocated per request by function", byFunction),
  ].join("\n");
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The area a frame belongs to: a `src/` folder, a package, Node itself, or a V8 pseudo-frame. */
function areaOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const source = url.indexOf("/src/");
  if (source >= 0) {
    const parts = url.slice(source + 1).split("/");
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.join("/");
  }
  return url.replace(/^file:\/\//, "");
}

function frameKey(frame: ProfileNode["callFrame"]): string {
  const file = frame.url.replace(/^.*\/(node_modules|src)\//, "$1/").replace(/^file:\/\//, "");
  return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
}

function table(title: string, totals: Map<string, number>, busy: number): string {
  const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  return [
    `\n${title}`,
    ...rows.map(([key, micros]) => `${((100 * micros) / busy).toFixed(1).padStart(6)} %  ${key}`),
  ].join("\n");
}

/**
 * Self and inclusive shares of the profile's busy time (idle left out), by function and area,
 * from `skipMicros` after the profile's start on (start-up and warm-up left out).
 */
export function summarize(profile: CpuProfile, skipMicros = 0): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const selfByFunction = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  let busy = 0;
  let elapsed = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id)!;
    const micros = profile.timeDeltas[index] ?? 0;
    elapsed += micros;
    if (elapsed < skipMicros || node.callFrame.functionName === "(idle)") return;
    busy += micros;
    add(selfByFunction, frameKey(node.callFrame), micros);
    add(selfByArea, areaOf(node.callFrame), micros);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = frameKey(byId.get(at)!.callFrame);
      if (!seen.has(key)) add(inclusive, key, micros);
      seen.add(key);
    }
  });
  return [
    `busy ${(busy / 1e6).toFixed(2)} s of CPU in the profile`,
    table("self time by area", selfByArea, busy),
    table("self time by function", selfByFunction, busy),
    table("inclusive time by function", inclusive, busy),
  ].join("\n");
}

async function main() {
  const stream = process.argv[2] === "stream";
  const api: LoadApi = loadApiNamed(process.env.PROFILE_API);
  const load = loadRequest(api, stream, process.env.PROFILE_MODEL || undefined);
  const seconds = Number(process.argv[3] ?? 10);
  const directory = mkdtempSync(join(tmpdir(), "switchyard-profile-"));
  const heap = process.env.PROFILE_HEAP === "1";
  const gc = process.env.PROFILE_GC === "1";
  const heapFile = join(directory, "gateway.heapprofile");
  const sandbox = await startServer(
    process.execPath,
    ["bin/switchyard.js", "sandbox", "--port", "0"],
    {
      cwd: ROOT,
      banner: LISTENING_BANNER,
    },
  );
  try {
    const spawned = performance.now();
    const nodeFlags = (process.env.PROFILE_NODE_FLAGS ?? "").split(" ").filter(Boolean);
    const gateway = await startServer(
      process.execPath,
      heap
        ? [...nodeFlags, "--import", "./bench/heap-sampler.mjs", "bin/switchyard.js", "start"]
        : gc
          ? [...nodeFlags, "--trace-gc-nvp", "bin/switchyard.js", "start"]
          : [...nodeFlags, "--cpu-prof", "--cpu-prof-dir", directory, "bin/switchyard.js", "start"],
      {
        cwd: ROOT,
        env: {
          PORT: "0",
          LOG_LEVEL: "warn",
          DATABASE_URL: process.env.PROFILE_DATABASE_URL ?? join(directory, "profile.sqlite"),
          SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
          SWITCHYARD_SANDBOX_URL: sandbox.url,
          HEAP_PROFILE_FILE: heapFile,
          HEAP_PROFILE_PROMOTED: process.env.PROFILE_PROMOTED === "1" ? "1" : "",
        },
        banner: GATEWAY_BANNER,
      },
    );
    const key = await createLoadKey(gateway.url, ADMIN_KEY);
    const options = {
      url: `${gateway.url}${load.path}`,
      method: "POST" as const,
      connections: Number(process.env.PROFILE_CONNECTIONS ?? 32),
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: load.body,
    };
    await autocannon({ ...options, duration: 2 }); // warm-up, left out of the summary
    const loaded = performance.now();
    if (heap) gateway.child.kill("SIGUSR2");
    const gcLines: string[] = [];
    let partial = "";
    const traced = (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.includes(" gc=")) gcLines.push(line);
    };
    if (gc) gateway.child.stdout?.on("data", traced);
    const result = await autocannon({ ...options, duration: seconds });
    gateway.child.stdout?.off("data", traced);
    if (gc && process.env.PROFILE_GC_LINES === "1")
      for (const line of gcLines) process.stdout.write(`${line}\n`);
    if (gc) {
      process.stdout.write(
        `${api} ${stream ? "stream" : "json"}: ${Math.round(result.requests.average)} requests/s, ` +
          `${result.non2xx + result.errors} failed\n${summarizeGc(gcLines, result.requests.total)}\n`,
      );
    }
    const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
    gateway.child.kill("SIGTERM");
    await exited;
    if (gc) return;
    if (heap) {
      const served = result.requests.total;
      process.stdout.write(
        `${api} ${stream ? "stream" : "json"}: ${Math.round(result.requests.average)} requests/s, ` +
          `${result.non2xx + result.errors} failed; heap profile ${heapFile}\n`,
      );
      const profile = JSON.parse(readFileSync(heapFile, "utf8")) as { head: HeapNode };
      process.stdout.write(`${summarizeHeap(profile.head, served)}\n`);
      return;
    }
    // One profile per thread (the module loader has one too): the main thread's is the largest.
    const file = readdirSync(directory)
      .filter((name) => name.endsWith(".cpuprofile"))
      .map((name) => ({ name, size: statSync(join(directory, name)).size }))
      .sort((a, b) => b.size - a.size)[0]?.name;
    if (!file) throw new Error(`no profile was written in ${directory}`);
    process.stdout.write(
      `${api} ${stream ? "stream" : "json"}: ${Math.round(result.requests.average)} requests/s, ` +
        `${result.non2xx + result.errors} failed; profile ${join(directory, file)} ` +
        `(load from ${((loaded - spawned) / 1000).toFixed(2)} s on)\n`,
    );
    const profile = JSON.parse(readFileSync(join(directory, file), "utf8")) as CpuProfile;
    process.stdout.write(`${summarize(profile, (loaded - spawned) * 1000)}\n`);
  } finally {
    sandbox.child.kill("SIGTERM");
  }
}

await main();
