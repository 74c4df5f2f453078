/**
 * The Claude Code CLI itself (`claude -p`), installed on demand (see test/support/claude-code.ts),
 * against `switchyard start` on the sandbox, with only ANTHROPIC_BASE_URL and
 * ANTHROPIC_AUTH_TOKEN pointing it at the gateway. Claude Code asks for its own model ids
 * (`claude-opus-…`, `claude-sonnet-…`), so the deployment's switchyard.yaml maps `claude-*` to
 * the native Anthropic route, and per-key `model_aliases` map it to translated routes.
 *
 * The sandbox answers a request that offers tools and ends with the user's text (Claude Code's
 * trailing system note on OpenAI-compatible routes aside) with a call to the FIRST tool, and answers a tool result with text quoting it. Claude Code's default tools
 * start with `Agent` (which would spawn sub-agents that call `Agent` again), so each run picks
 * its tools with `--tools`: none for the plain prompt; `Glob,Grep` for the tool round trip, so
 * the first tool is a read-only search of an empty folder (Claude Code inserts its
 * `DeferredToolPlaceholder` before the last tool, hence two tools).
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClaudeResult,
  claudeCodeEnv,
  installClaudeCode,
  runClaudePrint,
} from "./support/claude-code.ts";
import {
  type GatewayProcess,
  KEY_LINE,
  killLeftovers,
  makeTempDir,
  parseJsonOutput,
  removeTempDirs,
  startGatewayProcess,
} from "./support/cli-process.ts";

interface Route {
  name: string;
  /** The catalog model `claude-*` is mapped to. */
  target: string;
  /** How: the deployment's `model_aliases` or the key's. */
  via: "deployment" | "key";
  /** Path prefix of the vendor emulation in the sandbox. */
  upstream: string;
  /** The target's output limit in the catalog (Claude Code asks for up to 128k tokens). */
  maxOutput: number;
}

const ROUTES: Route[] = [
  {
    name: "native Anthropic route",
    target: "claude-haiku-4-5",
    via: "deployment",
    upstream: "/anthropic/",
    maxOutput: 64_000,
  },
  {
    name: "translated OpenAI-compatible route",
    target: "gpt-4o-mini",
    via: "key",
    upstream: "/openai/",
    maxOutput: 16_384,
  },
  {
    name: "translated Gemini route",
    target: "gemini-2.5-flash",
    via: "key",
    upstream: "/gemini/",
    maxOutput: 65_536,
  },
];

/** The tools of the tool round trip: the first is the one the sandbox calls. */
const SEARCH_TOOLS = ["Glob", "Grep"];

interface LoggedRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
}

interface ToolTraffic {
  offered: string[];
  calls: Array<{ id?: string; name: string }>;
  results: Array<{ id?: string; name?: string; text: string; isError: boolean }>;
}

type Json = Record<string, unknown>;

function records(value: unknown): Json[] {
  return Array.isArray(value)
    ? value.filter((item): item is Json => typeof item === "object" && item !== null)
    : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return records(content)
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .join("\n");
}

/** The tools offered, called and answered in one upstream request, whatever its protocol. */
function toolTraffic(entry: LoggedRequest): ToolTraffic {
  const body = entry.body ?? {};
  const traffic: ToolTraffic = { offered: [], calls: [], results: [] };
  if (entry.path.startsWith("/anthropic/")) {
    traffic.offered = records(body.tools).map((tool) => String(tool.name));
    for (const message of records(body.messages)) {
      for (const block of records(message.content)) {
        if (block.type === "tool_use")
          traffic.calls.push({ id: String(block.id), name: String(block.name) });
        if (block.type === "tool_result") {
          traffic.results.push({
            id: String(block.tool_use_id),
            text: textOf(block.content),
            isError: block.is_error === true,
          });
        }
      }
    }
  } else if (entry.path.startsWith("/gemini/")) {
    traffic.offered = records(body.tools)
      .flatMap((tool) => records(tool.functionDeclarations))
      .map((declaration) => String(declaration.name));
    for (const content of records(body.contents)) {
      for (const part of records(content.parts)) {
        const call = part.functionCall as Json | undefined;
        if (call) traffic.calls.push({ name: String(call.name) });
        const result = part.functionResponse as Json | undefined;
        if (result) {
          const response = (result.response ?? {}) as Json;
          const text =
            typeof response.content === "string" ? response.content : JSON.stringify(response);
          traffic.results.push({
            name: String(result.name),
            text,
            isError: "error" in response || text.startsWith("Error: "),
          });
        }
      }
    }
  } else {
    traffic.offered = records(body.tools).map((tool) => String((tool.function as Json)?.name));
    for (const message of records(body.messages)) {
      for (const call of records(message.tool_calls)) {
        traffic.calls.push({ id: String(call.id), name: String((call.function as Json)?.name) });
      }
      if (message.role === "tool") {
        const text = textOf(message.content);
        traffic.results.push({
          id: String(message.tool_call_id),
          text,
          isError: text.startsWith("Error: "),
        });
      }
    }
  }
  return traffic;
}

/** The output-token limit an upstream request asks for, whatever its protocol. */
function upstreamMaxTokens(entry: LoggedRequest): unknown {
  const body = entry.body ?? {};
  if (entry.path.startsWith("/gemini/")) return (body.generationConfig as Json)?.maxOutputTokens;
  return body.max_tokens ?? body.max_completion_tokens;
}

let claude: { binary: string; version: string };
let gateway: GatewayProcess;
let sandboxUrl = "";
const keys = new Map<string, string>();

afterAll(async () => {
  await killLeftovers();
  removeTempDirs();
});

beforeAll(async () => {
  // The first run downloads the CLI (a native binary of a few hundred MB); later runs reuse it.
  claude = await installClaudeCode();

  const cwd = makeTempDir("switchyard-claude-gateway-");
  writeFileSync(
    join(cwd, "switchyard.yaml"),
    `model_aliases:\n  "claude-*": ${ROUTES[0]?.target}\n`,
  );
  gateway = await startGatewayProcess(cwd);
  await gateway.proc.waitForLine(/curl /, 10_000);
  const adminKey = gateway.proc.lines.find((line) => KEY_LINE.test(line));
  const sandbox = gateway.proc.lines
    .map((line) => /; sandbox (http:\/\/\S+)/.exec(line)?.[1])
    .find((url) => url !== undefined);
  if (!adminKey || !sandbox) throw new Error(`unexpected banner:\n${gateway.proc.stdout()}`);
  sandboxUrl = sandbox;

  for (const route of ROUTES) {
    if (route.via === "deployment") {
      keys.set(route.target, adminKey);
      continue;
    }
    const response = await fetch(`${gateway.url}/v1/account/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: `claude-code-${route.target}`,
        model_aliases: { "claude-*": route.target },
      }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
    keys.set(route.target, ((await response.json()) as { key: string }).key);
  }
}, 420_000);

interface Run {
  output: ClaudeResult;
  /** What the sandbox received for the route's vendor, oldest first. */
  upstream: LoggedRequest[];
  /** The gateway's `request completed` log lines of the run. */
  served: Array<{ path: string; model?: string; status: number }>;
}

async function runClaude(route: Route, prompt: string, tools: string): Promise<Run> {
  const reset = await fetch(`${sandboxUrl}/__sandbox/reset`, { method: "POST" });
  expect(reset.status).toBe(200);
  const firstLine = gateway.proc.lines.length;
  const result = await runClaudePrint({
    binary: claude.binary,
    prompt,
    args: ["--tools", tools],
    cwd: makeTempDir("switchyard-claude-work-"),
    env: claudeCodeEnv({
      home: makeTempDir("switchyard-claude-home-"),
      baseUrl: gateway.url,
      token: keys.get(route.target) ?? "",
    }),
  });
  const context = `claude ${claude.version} exited with ${result.code}\nstdout: ${result.stdout.slice(0, 3000)}\nstderr: ${result.stderr.slice(-3000)}`;
  expect(result.code, context).toBe(0);
  const output = parseJsonOutput<ClaudeResult>(result);

  const log = (await (await fetch(`${sandboxUrl}/__sandbox/requests`)).json()) as {
    requests: LoggedRequest[];
  };
  const upstream = log.requests.filter((entry) => entry.path.startsWith(route.upstream));
  const served = () =>
    gateway.proc.lines
      .slice(firstLine)
      .filter((line) => line.startsWith("{") && line.includes('"request completed"'))
      .map((line) => JSON.parse(line) as Run["served"][number]);
  // The gateway logs a request once its response has ended: give the last line a moment.
  for (let waited = 0; waited < 5_000; waited += 50) {
    const messages = served().filter((line) => line.path.startsWith("/v1/messages"));
    if (messages.length >= upstream.length) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { output, upstream, served: served() };
}

function expectServedBy(run: Run, route: Route): void {
  const messages = run.served.filter((line) => line.path.startsWith("/v1/messages"));
  expect(messages.length, JSON.stringify(run.served)).toBeGreaterThan(0);
  for (const line of messages) expect(line.status, JSON.stringify(line)).toBeLessThan(400);
  expect(messages.map((line) => line.model)).toContain(route.target);
  expect(run.upstream.length, "no request reached the route's upstream").toBeGreaterThan(0);
  // Claude Code sizes max_tokens for the model it thinks it talks to; the upstream gets no
  // more than the model it really talks to allows.
  for (const entry of run.upstream) {
    expect(upstreamMaxTokens(entry)).toBeGreaterThan(0);
    expect(upstreamMaxTokens(entry)).toBeLessThanOrEqual(route.maxOutput);
  }
}

describe.each(ROUTES)("Claude Code over the $name ($target)", { timeout: 180_000 }, (route) => {
  it("completes a plain prompt", async () => {
    const run = await runClaude(route, "Say hello to the gateway", "");
    expect(run.output, JSON.stringify(run.output)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
    });
    expect(run.output.result).toContain("Sandbox reply to");
    expectServedBy(run, route);
    if (route.target === "gpt-4o-mini") {
      // Claude Code always asks for thinking; a model that does not reason gets no
      // reasoning_effort (OpenAI refuses it for such a model).
      for (const entry of run.upstream) expect(entry.body).not.toHaveProperty("reasoning_effort");
    }
  });

  it("calls a tool and finishes with its result", async () => {
    const run = await runClaude(route, "Find the TypeScript files here", SEARCH_TOOLS.join(","));
    expect(run.output, JSON.stringify(run.output)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
    });
    expectServedBy(run, route);

    const [first] = run.upstream;
    const offered = first ? toolTraffic(first).offered : [];
    expect(offered, "the first request should offer the chosen tools").toEqual(
      expect.arrayContaining(SEARCH_TOOLS),
    );
    // The sandbox calls the first tool offered: it must be one of ours (a new Claude Code
    // version that puts another tool first needs a different --tools choice here).
    expect(SEARCH_TOOLS, `tools offered: ${offered.join(", ")}`).toContain(offered[0]);

    // A later request carries the tool call and its result, which the final answer quotes.
    const answered = run.upstream
      .map(toolTraffic)
      .find((traffic) => traffic.calls.length > 0 && traffic.results.length > 0);
    if (!answered) {
      throw new Error(
        `no upstream request carried a tool result: ${JSON.stringify(run.upstream.map((entry) => entry.body)).slice(0, 4000)}`,
      );
    }
    const call = answered.calls[0];
    const result = answered.results[0];
    expect(call?.name).toBe(offered[0]);
    if (result?.id !== undefined) expect(result.id).toBe(call?.id);
    else expect(result?.name).toBe(call?.name);
    expect(result?.isError, `tool result: ${result?.text}`).toBe(false);
    expect(run.output.result).toContain("Sandbox reply using tool result");
    const quoted = (result?.text ?? "").split(/\s+/).slice(0, 3).join(" ");
    expect(run.output.result).toContain(quoted);
    expect(run.output.num_turns).toBeGreaterThanOrEqual(2);
  });
});
