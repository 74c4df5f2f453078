/**
 * `npm start` on a fresh checkout: the real CLI in a child process, an empty working directory,
 * no vendor credentials and no configuration but PORT=0.
 */
import { existsSync, readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  type GatewayProcess,
  KEY_LINE,
  killLeftovers,
  makeTempDir,
  REPO_ROOT,
  randomBase62,
  removeTempDirs,
  spawnCli,
  sseData,
  startGatewayProcess,
} from "./support/cli-process.ts";
import { SPEC_MODEL_IDS } from "./support/spec-model-ids.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

function get(gateway: GatewayProcess, path: string, key: string): Promise<Response> {
  return fetch(gateway.url + path, { headers: { authorization: `Bearer ${key}` } });
}

function post(gateway: GatewayProcess, path: string, key: string, body: unknown) {
  return fetch(gateway.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function printedKey(gateway: GatewayProcess): Promise<string> {
  // The curl line is the last line of the first-start banner.
  await gateway.proc.waitForLine(/curl /, 5_000);
  const keys = gateway.proc.lines.filter((line) => KEY_LINE.test(line));
  expect(keys, gateway.proc.stdout()).toHaveLength(1);
  return keys[0] as string;
}

describe("npm start on a fresh checkout", { timeout: 60_000 }, () => {
  const dir = makeTempDir("switchyard-start-");
  let firstKey = "";

  it("is what `npm start` runs", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      scripts?: Record<string, string>;
    };
    expect(pkg.scripts?.start).toBe("node bin/switchyard.js start");
  });

  it("starts on a free port, prints a first admin key and serves with it", async () => {
    const gateway = await startGatewayProcess(dir);
    expect(gateway.bannerAfterMs).toBeLessThan(10_000);
    expect(gateway.port).toBeGreaterThan(0);

    const key = await printedKey(gateway);
    firstKey = key;
    // No credential: the demo. The banner says plainly that replies are not a vendor's.
    const simulated = gateway.proc.lines.filter((line) => line.includes("SANDBOX"));
    expect(simulated, gateway.proc.stdout()).toHaveLength(1);
    expect(simulated[0]).toMatch(
      /^ {2}SANDBOX: replies are simulated, not from real vendors \(anthropic, .*openai.*\)\.$/,
    );
    const curl = gateway.proc.lines.filter((line) => line.includes("curl"));
    expect(curl).toHaveLength(1);
    expect(curl[0]).toContain(key);
    expect(curl[0]).toContain(`${gateway.url}/v1/models`);

    const models = await get(gateway, "/v1/models", key);
    expect(models.status).toBe(200);
    const list = (await models.json()) as { object: string; data: { id: string }[] };
    expect(list.object).toBe("list");
    const ids = list.data.map((model) => model.id);
    for (const id of SPEC_MODEL_IDS) expect(ids).toContain(id);

    const completion = await post(gateway, "/v1/chat/completions", key, {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello from a fresh checkout" }],
    });
    expect(completion.status).toBe(200);
    const body = (await completion.json()) as {
      object: string;
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]?.message.content).toMatch(/^Sandbox reply to/);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);

    const stream = await post(gateway, "/v1/chat/completions", key, {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Stream from a fresh checkout" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await stream.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const data = sseData(text);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map(
      (payload) =>
        JSON.parse(payload) as {
          choices: unknown[];
          usage?: { prompt_tokens: number; completion_tokens: number } | null;
        },
    );
    const usage = chunks.filter((chunk) => chunk.usage);
    expect(usage).toHaveLength(1);
    expect(usage[0]?.choices).toEqual([]);
    expect(usage[0]?.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage[0]?.usage?.completion_tokens).toBeGreaterThan(0);

    expect(existsSync(join(dir, "data", "switchyard.sqlite"))).toBe(true);

    const signalledAt = performance.now();
    const exit = await gateway.proc.stop("SIGTERM", 10_000);
    expect(exit.at - signalledAt).toBeLessThan(10_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it("prints no key on the next start and keeps the old key working", async () => {
    expect(firstKey).toMatch(KEY_LINE);
    const gateway = await startGatewayProcess(dir);
    const models = await get(gateway, "/v1/models", firstKey);
    expect(models.status).toBe(200);
    const wrong = await get(gateway, "/v1/models", `sk-${randomBase62(48)}`);
    expect(wrong.status).toBe(401);

    const exit = await gateway.proc.stop("SIGTERM", 10_000);
    expect(exit.code).toBe(0);
    // The output is complete once the process is gone.
    const output = gateway.proc.stdout();
    expect(gateway.proc.lines.filter((line) => KEY_LINE.test(line))).toEqual([]);
    expect(output).not.toMatch(/sk-[0-9A-Za-z]{40,}/);
    expect(output).not.toContain("First start");
    expect(output).not.toContain("curl");
  });

  it("uses SWITCHYARD_ADMIN_KEY as the first key when given", async () => {
    const chosen = `sk-${randomBase62(48)}`;
    const gateway = await startGatewayProcess(makeTempDir("switchyard-start-key-"), {
      SWITCHYARD_ADMIN_KEY: chosen,
    });
    expect(await printedKey(gateway)).toBe(chosen);
    const models = await get(gateway, "/v1/models", chosen);
    expect(models.status).toBe(200);
    const exit = await gateway.proc.stop("SIGTERM", 10_000);
    expect(exit.code).toBe(0);
  });

  it("treats an empty SWITCHYARD_ADMIN_KEY as unset", async () => {
    const gateway = await startGatewayProcess(makeTempDir("switchyard-start-empty-key-"), {
      SWITCHYARD_ADMIN_KEY: "",
    });
    const key = await printedKey(gateway);
    expect((await get(gateway, "/v1/models", key)).status).toBe(200);
    expect((await gateway.proc.stop("SIGTERM", 10_000)).code).toBe(0);
  });

  it("exits 1 at once, printing no key, when SWITCHYARD_ADMIN_KEY is malformed", async () => {
    const proc = spawnCli(["start"], {
      cwd: makeTempDir("switchyard-start-bad-key-"),
      env: cleanEnv({ PORT: "0", SWITCHYARD_ADMIN_KEY: "sk-too-short" }),
    });
    const exit = await proc.waitForExit(15_000);
    expect(exit.code).toBe(1);
    expect(proc.stderr()).toContain("SWITCHYARD_ADMIN_KEY must be 'sk-'");
    expect(proc.stdout()).not.toMatch(/sk-[0-9A-Za-z]{40,}/);
  });
});

describe("start-up failures an operator can act on", { timeout: 60_000 }, () => {
  it("says in one line that the port is in use, and exits 1", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const proc = spawnCli(["start"], {
        cwd: makeTempDir("switchyard-start-port-in-use-"),
        env: cleanEnv({ PORT: String(port) }),
      });
      const exit = await proc.waitForExit(30_000);
      expect(exit.code).toBe(1);
      expect(proc.stderr()).toBe(
        `Cannot listen on 127.0.0.1:${port}: the port is already in use. Stop the process that holds it, or set PORT (server.port) to a free port (0 picks one).\n`,
      );
      expect(proc.stdout()).not.toMatch(/listening on|sk-|EADDRINUSE/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("says in one line that the host does not resolve, and exits 1", async () => {
    const proc = spawnCli(["start"], {
      cwd: makeTempDir("switchyard-start-bad-host-"),
      env: cleanEnv({ PORT: "8123", HOST: "no-such-host.invalid" }),
    });
    const exit = await proc.waitForExit(30_000);
    expect(exit.code).toBe(1);
    expect(proc.stderr()).toBe(
      "Cannot listen on no-such-host.invalid:8123: the host name 'no-such-host.invalid' does not resolve. Set HOST (server.host) to an address such as 127.0.0.1 or 0.0.0.0.\n",
    );
  });
});
