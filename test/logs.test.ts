/**
 * The log lines an operator reads: one `request completed` line per model request naming the
 * account, key id (never the key), model, vendor and upstream model, tokens and cost; a vendor's
 * failure as a warning with the upstream status and no stack trace; ISO 8601 times.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { createLogger, type RunningGateway, startGateway } from "../src/main.ts";

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split("\n").filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let gateway: RunningGateway;
let key: string;

beforeAll(async () => {
  const config = loadConfig({
    env: {},
    overrides: {
      database_url: ":memory:",
      log_level: "info",
      server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
    },
  });
  gateway = await startGateway({
    env: {},
    config,
    logger: createLogger("info", sink),
    print: () => {},
  });
  key = gateway.bootstrapKey!;
});
afterAll(() => gateway.close());

const chat = (content: string) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
  });

describe("log lines", () => {
  it("complete a request with who, what, where and how much — and never the key", async () => {
    const response = await chat("log me");
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    await expect.poll(() => lines.find((line) => line.requestId === requestId)).toBeDefined();
    const line = lines.find(
      (each) => each.requestId === requestId && each.msg === "request completed",
    );
    expect(line).toMatchObject({
      level: 30,
      accountId: expect.stringMatching(/^acct_/),
      keyId: expect.stringMatching(/^key_/),
      model: "gpt-4o-mini",
      vendor: "openai",
      upstreamModel: "gpt-4o-mini",
      path: "/v1/chat/completions",
      status: 200,
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      costMicros: Number(response.headers.get("x-switchyard-cost-micros")),
    });
    expect(line!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it("reports a vendor's failure as a warning with its status, without a stack trace", async () => {
    const response = await chat("[[sandbox:status=503]] fail");
    expect(response.status).toBe(502);
    const requestId = response.headers.get("x-request-id");
    await expect.poll(() => lines.find((line) => line.requestId === requestId)).toBeDefined();
    const failures = lines.filter(
      (line) => line.requestId === requestId && Number(line.level) >= 40,
    );
    expect(failures).toEqual([
      expect.objectContaining({
        level: 40,
        msg: "upstream failed",
        code: "upstream_error",
        status: 502,
        upstreamStatus: 503,
      }),
    ]);
    expect(JSON.stringify(failures)).not.toMatch(/"stack"|"err"/);
  });

  it("logs a client that went away before the vendor answered as such, not as a vendor failure", async () => {
    const client = new AbortController();
    const pending = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "[[sandbox:delay=2000]] slow" }],
      }),
      signal: client.signal,
    });
    const before = lines.length;
    setTimeout(() => client.abort(), 300);
    await expect(pending).rejects.toThrow();
    await expect
      .poll(() => lines.slice(before).find((line) => line.msg === "client closed the request"), {
        timeout: 5_000,
      })
      .toMatchObject({ level: 30, code: expect.any(String) });
    expect(lines.slice(before).filter((line) => line.msg === "upstream failed")).toEqual([]);
  });
});

/** A gateway on SQLite in memory whose log lines are collected into `logged`. */
async function loggedGateway(
  overrides: Record<string, unknown>,
  logged: Record<string, unknown>[],
) {
  const into = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean))
        logged.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return startGateway({
    env: {},
    config: loadConfig({
      env: {},
      overrides: {
        database_url: ":memory:",
        log_level: "info",
        server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
        ...overrides,
      },
    }),
    logger: createLogger("info", into),
    print: () => {},
  });
}

/** The lines at `warn` or above logged for one request. */
async function warnings(logged: Record<string, unknown>[], response: Response) {
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toBeTruthy();
  await expect
    .poll(() => logged.filter((line) => line.requestId === requestId && Number(line.level) >= 40))
    .not.toEqual([]);
  return logged.filter((line) => line.requestId === requestId && Number(line.level) >= 40);
}

describe("expected 503s that are not the gateway's own fault", () => {
  const expectWarning = async (
    logged: Record<string, unknown>[],
    response: Response,
    code: string,
  ) => {
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    const failures = await warnings(logged, response);
    expect(failures).toEqual([
      expect.objectContaining({ level: 40, code, status: 503, message: body.error.message }),
    ]);
    expect(JSON.stringify(failures)).not.toMatch(/"stack"|"err"/);
  };

  it("vendor_not_configured is a warning with its code and message, without a stack trace", async () => {
    const logged: Record<string, unknown>[] = [];
    const running = await loggedGateway({ sandbox: { mode: "never" } }, logged);
    try {
      const response = await fetch(`${running.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${running.bootstrapKey}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
      await expectWarning(logged, response, "vendor_not_configured");
    } finally {
      await running.close();
    }
  });

  it("upstream_unavailable (an open circuit breaker) is a warning, without a stack trace", async () => {
    const logged: Record<string, unknown>[] = [];
    const running = await loggedGateway(
      {
        routing: {
          circuit_breaker: { enabled: true, failure_threshold: 1, cooldown_seconds: 60 },
        },
        catalog: {
          files: [],
          vendors: {},
          models: [
            {
              id: "lonely-chat",
              endpoint: "chat",
              family: "test",
              display_name: "lonely-chat",
              owned_by: "switchyard",
              pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
              routes: [{ vendor: "openai", upstream_model: "lonely-route" }],
            },
          ],
        },
      },
      logged,
    );
    const chatOnce = (content: string) =>
      fetch(`${running.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${running.bootstrapKey}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ model: "lonely-chat", messages: [{ role: "user", content }] }),
      });
    try {
      expect((await chatOnce("[[sandbox:status=500]] fail")).status).toBe(502);
      await expectWarning(logged, await chatOnce("hi"), "upstream_unavailable");
    } finally {
      await running.close();
    }
  });

  it("shutting_down on /readyz during a drain is a warning, without a stack trace", async () => {
    const logged: Record<string, unknown>[] = [];
    const running = await loggedGateway({}, logged);
    const closing = running.close({ drainDelaySeconds: 30 });
    try {
      await expectWarning(logged, await fetch(`${running.url}/readyz`), "shutting_down");
    } finally {
      running.skipDrainDelay();
      await closing;
    }
  });
});
