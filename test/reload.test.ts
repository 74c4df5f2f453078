/**
 * SIGHUP on the real `switchyard start` process: the catalog, model aliases, limits and log level
 * are reloaded from `switchyard.yaml` and logged; settings that take a restart are named; a
 * request in flight is not dropped; a broken file changes nothing; the process keeps serving.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  type GatewayProcess,
  killLeftovers,
  makeTempDir,
  randomBase62,
  removeTempDirs,
  sseData,
  startGatewayProcess,
} from "./support/cli-process.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

const BEFORE = `
log_level: info
limits:
  default_rpm: null
`;

const AFTER = `
log_level: debug
limits:
  default_rpm: 1000
model_aliases:
  house-model: gpt-4o-mini
registration:
  enabled: false
server:
  body_limit_bytes: 2000000
catalog:
  models:
    - id: house-llama
      endpoint: chat
      family: llama
      display_name: House Llama
      owned_by: self-hosted
      capabilities: { streaming: true, context_window: 8192, max_output_tokens: 1024 }
      pricing:
        per_1m_tokens: { input: 50000, output: 100000 }
      routes:
        - vendor: local
          adapter: openai-compatible
          base_url: http://127.0.0.1:9/v1
          upstream_model: llama
`;

function chat(gateway: GatewayProcess, key: string, model: string, content = "hi") {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
}

/** The first JSON log line from line `after` on whose message starts with `message`. */
async function logLine(gateway: GatewayProcess, message: string, after: number) {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const line = gateway.proc.lines
      .slice(after)
      .find((candidate) => candidate.includes(`"msg":"${message}`));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    if (performance.now() > deadline)
      throw new Error(`no log line '${message}':\n${gateway.proc.stdout().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("SIGHUP", { timeout: 60_000 }, () => {
  it("reloads catalog, aliases, limits and log level, logs what changed and keeps serving", async () => {
    const dir = makeTempDir("switchyard-reload-");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(config, BEFORE);
    const key = `sk-${randomBase62(48)}`;
    const gateway = await startGatewayProcess(dir, { SWITCHYARD_ADMIN_KEY: key });
    const headers = { authorization: `Bearer ${key}` };

    expect((await chat(gateway, key, "house-model")).status).toBe(404);
    expect((await fetch(`${gateway.url}/v1/models/house-llama`, { headers })).status).toBe(404);
    expect(
      (await chat(gateway, key, "gpt-4o-mini")).headers.get("x-ratelimit-limit-requests"),
    ).toBeNull();

    // A stream in flight across the reload: it must finish whole.
    const stream = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        messages: [{ role: "user", content: "Tell a story [[sandbox:chunk-delay=100;words=12]]" }],
      }),
    }).then(async (response) => ({ status: response.status, text: await response.text() }));
    await new Promise((resolve) => setTimeout(resolve, 300));

    writeFileSync(config, AFTER);
    const linesBefore = gateway.proc.lines.length;
    gateway.proc.child.kill("SIGHUP");
    const reloaded = await logLine(gateway, "configuration reloaded", linesBefore);
    expect(reloaded.changes).toEqual(
      expect.arrayContaining([
        "catalog models: added house-llama",
        "model_aliases: added house-model",
        "limits.default_rpm: null → 1000",
        "log_level: info → debug",
      ]),
    );
    const restart = await logLine(gateway, "configuration reload: these settings", linesBefore);
    expect(restart.settings).toEqual(["server.body_limit_bytes", "registration.enabled"]);

    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(sseData(streamed.text).at(-1)).toBe("[DONE]");

    const aliased = await chat(gateway, key, "house-model");
    expect(aliased.status).toBe(200);
    expect(((await aliased.json()) as { model: string }).model).toBe("gpt-4o-mini");
    expect(aliased.headers.get("x-ratelimit-limit-requests")).toBe("1000");
    expect((await fetch(`${gateway.url}/v1/models/house-llama`, { headers })).status).toBe(200);
    // The log level applies at once: a request now logs its upstream attempt at debug (20).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateway.proc.lines.slice(linesBefore).some((line) => line.includes('"level":20'))).toBe(
      true,
    );
    // Settings that take a restart kept their running values: registration is still open.
    const register = await fetch(`${gateway.url}/v1/account/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "new@example.com", password: "long-enough-password" }),
    });
    expect(register.status).toBe(201);

    // A broken file changes nothing, and says why.
    writeFileSync(config, "limits: [not, a, mapping");
    const linesAtBreak = gateway.proc.lines.length;
    gateway.proc.child.kill("SIGHUP");
    const failed = await logLine(gateway, "configuration reload failed", linesAtBreak);
    expect(String(failed.reason)).toContain("is not valid YAML");
    expect((await chat(gateway, key, "house-model")).status).toBe(200);

    expect(gateway.proc.child.exitCode).toBeNull();
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    expect((await gateway.proc.stop("SIGTERM", 15_000)).code).toBe(0);
  });
});
