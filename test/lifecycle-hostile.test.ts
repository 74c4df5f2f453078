/**
 * The HTTP layer and the process lifecycle under keep-alive clients, repeated stop signals and
 * wrong methods. Each test asserts the documented (or, where the docs are silent, the expected)
 * behaviour and failed before its fix.
 */
import { mkdtempSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { randomBase62 } from "./support/cli-process.ts";
import { freshDatabase } from "./support/cluster.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { postgresReachable } from "./support/postgres.ts";
import { type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

/** A chat completion on `agent`'s connection; resolves when the whole answer has arrived. */
function chat(
  url: string,
  key: string,
  body: unknown,
  agent: Agent,
): Promise<{ status: number; connection: string | undefined; text: string; endedAt: number }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            text,
            endedAt: performance.now(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("shutdown with keep-alive clients", { timeout: 30_000 }, () => {
  const GRACE_SECONDS = 8;
  let gateway: TestGateway | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  afterAll(() => agent.destroy());

  for (const kind of ["stream", "JSON answer"] as const) {
    it(`finishes the shutdown as soon as an in-flight ${kind} on a keep-alive connection has ended, not after the whole grace period`, async () => {
      gateway = await startTestGateway({
        config: {
          server: {
            port: 0,
            host: "127.0.0.1",
            shutdown_grace_seconds: GRACE_SECONDS,
            keep_alive_timeout_ms: 60_000,
          },
        },
      });
      const { key } = await createUser(gateway);
      // The OpenAI SDKs (and nginx's upstream keepalive) reuse connections like this agent.
      const answer = chat(
        gateway.url,
        key,
        {
          model: "gpt-4o-mini",
          stream: kind === "stream",
          messages: [
            {
              role: "system",
              content:
                kind === "stream"
                  ? "[[sandbox:chunk-delay=100;words=10]]"
                  : "[[sandbox:delay=1000]]",
            },
            { role: "user", content: "hi" },
          ],
        },
        agent,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const closed = gateway.close().then(() => performance.now());
      const result = await answer;
      expect(result.status).toBe(200);
      const closedAt = await closed;
      // docs/architecture.md (Signals): the listener closes, in-flight requests and streams
      // finish "(up to server.shutdown_grace_seconds ...)", then the process exits. Once the
      // last answer is out nothing is in flight: the drain should end then, not sit on an idle
      // keep-alive connection until the grace period runs out.
      const drainEndedAfterLastAnswerMs = Math.round(closedAt - result.endedAt);
      expect(drainEndedAfterLastAnswerMs).toBeLessThan(2_000);
    });
  }
});

const pgAvailable = await postgresReachable();

describe.skipIf(!pgAvailable)("start --workers: signals", { timeout: 60_000 }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let gateway: SpawnedGateway | undefined;
  afterEach(async () => {
    gateway?.child.kill("SIGKILL");
    await gateway?.exited;
    await database?.drop();
  });

  it("stops at once on the third stop signal, as a single process does", async () => {
    database = await freshDatabase();
    const key = `sk-${randomBase62(48)}`;
    gateway = await spawnGateway({
      cwd: mkdtempSync(join(tmpdir(), "lifecycle-workers-")),
      args: ["--workers", "2"],
      env: {
        DATABASE_URL: database.url,
        SWITCHYARD_ADMIN_KEY: key,
        SWITCHYARD_SANDBOX: "always",
        SWITCHYARD_DRAIN_DELAY_SECONDS: "60",
      },
      timeoutMs: 40_000,
    });
    // A stream of about 60 s keeps a worker draining.
    const agent = new Agent({ keepAlive: false });
    const stream = chat(
      gateway.url,
      key,
      {
        model: "gpt-4o-mini",
        stream: true,
        messages: [
          { role: "system", content: "[[sandbox:chunk-delay=1000;words=60]]" },
          { role: "user", content: "hi" },
        ],
      },
      agent,
    ).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    let exit: number | string | undefined;
    void gateway.exited.then((code) => {
      exit = code;
    });
    // docs/architecture.md, Signals: "A second signal ends the delay at once; a third stops
    // the process at once." Workers "each of which drains ... as a single process does".
    for (let i = 0; i < 3; i++) {
      gateway.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect({ exitedAfterThirdSignal: exit !== undefined }).toEqual({
      exitedAfterThirdSignal: true,
    });
    agent.destroy();
    void stream;
  });
});

describe("error dialects before routing", () => {
  let gateway: TestGateway;
  afterAll(() => gateway.close());

  it("answers a wrong method on /v1/messages in the Anthropic dialect", async () => {
    gateway = await startTestGateway();
    const response = await fetch(`${gateway.url}/v1/messages`, {
      headers: { "x-api-key": gateway.adminKey, "anthropic-version": "2023-06-01" },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    // docs/errors.md: the `anthropic` dialect is "Used by /v1/messages" (a 405 is `api_error`
    // there, "anything else"); only unknown paths are named for the gateway dialect.
    expect(await response.json()).toMatchObject({
      type: "error",
      error: { type: "api_error", details: { error_code: "method_not_allowed" } },
    });
  });
});
