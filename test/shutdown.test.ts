/**
 * Graceful shutdown of the real `switchyard start` process: SIGTERM stops new connections,
 * lets an in-flight stream finish, then exits 0; with `server.drain_delay_seconds` the listener
 * first stays open, serving, while `/readyz` answers 503.
 */
import { request } from "node:http";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  killLeftovers,
  makeTempDir,
  randomBase62,
  removeTempDirs,
  sseData,
  startGatewayProcess,
} from "./support/cli-process.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

/** One request on its own fresh connection: the status, or the connection error's code. */
function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

interface StreamResult {
  status: number;
  contentType: string;
  text: string;
  endedAt: number;
}

/** A streaming chat completion on its own connection. */
function openStream(url: string, key: string, body: unknown) {
  let ended = false;
  let firstFrame!: () => void;
  const started = new Promise<void>((resolve) => {
    firstFrame = resolve;
  });
  const done = new Promise<StreamResult>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent: false,
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
          if (text.includes("data:")) firstFrame();
        });
        res.on("end", () => {
          ended = true;
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"]),
            text,
            endedAt: performance.now(),
          });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
  // Fail the wait for the first frame too when the request fails.
  done.catch(() => firstFrame());
  return { started, done, hasEnded: () => ended };
}

describe("SIGTERM", { timeout: 60_000 }, () => {
  it("answers health checks, drains an in-flight stream, refuses new work and exits 0", async () => {
    const key = `sk-${randomBase62(48)}`;
    const gateway = await startGatewayProcess(makeTempDir("switchyard-shutdown-"), {
      SWITCHYARD_ADMIN_KEY: key,
    });

    expect(await probe(`${gateway.url}/healthz`)).toBe(200);
    expect(await probe(`${gateway.url}/readyz`)).toBe(200);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(await ready.json()).toMatchObject({ status: "ready" });

    // 16 words at 150 ms per frame: the stream runs for about 3 seconds.
    const words = 16;
    const stream = openStream(gateway.url, key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "user", content: `Tell a long story [[sandbox:chunk-delay=150;words=${words}]]` },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    await stream.started;
    expect(stream.hasEnded()).toBe(false);

    const signalledAt = performance.now();
    gateway.proc.child.kill("SIGTERM");

    // New connections: answered normally until the listener closes, then refused (or 503).
    const seen: (number | string)[] = [];
    let refusedWhileStreaming = false;
    while (performance.now() - signalledAt < 2_000 && !stream.hasEnded()) {
      const outcome = await probe(`${gateway.url}/healthz`);
      seen.push(outcome);
      if (outcome === "ECONNREFUSED" || outcome === 503) {
        refusedWhileStreaming = !stream.hasEnded() && gateway.proc.child.exitCode === null;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect({ refusedWhileStreaming, seen }).toMatchObject({ refusedWhileStreaming: true });
    // Nothing but 200 (before the listener closed), a reset at the moment it closed, or a refusal.
    for (const outcome of seen) {
      expect([200, 503, "ECONNREFUSED", "ECONNRESET"]).toContain(outcome);
    }

    const result = await stream.done;
    expect(result.status).toBe(200);
    expect(result.contentType).toMatch(/^text\/event-stream/);
    expect(result.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    // The stream went on well after the signal, and nothing of it was cut.
    expect(result.endedAt - signalledAt).toBeGreaterThan(1_000);
    const chunks = sseData(result.text)
      .slice(0, -1)
      .map(
        (data) =>
          JSON.parse(data) as {
            choices: { delta: { content?: string } }[];
            usage?: { completion_tokens: number } | null;
          },
      );
    const content = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(content.trim().split(/\s+/)).toHaveLength(words);
    expect(chunks.some((chunk) => (chunk.usage?.completion_tokens ?? 0) > 0)).toBe(true);

    const exit = await gateway.proc.waitForExit(10_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(gateway.proc.stdout()).toContain("draining in-flight requests");
  });
});

describe("SIGTERM with server.drain_delay_seconds", { timeout: 60_000 }, () => {
  it("keeps the listener open with /readyz at 503 for the delay, serving, then closes and exits 0", async () => {
    const key = `sk-${randomBase62(48)}`;
    const gateway = await startGatewayProcess(makeTempDir("switchyard-drain-delay-"), {
      SWITCHYARD_ADMIN_KEY: key,
      SWITCHYARD_DRAIN_DELAY_SECONDS: "2",
    });
    expect(await probe(`${gateway.url}/readyz`)).toBe(200);

    const signalledAt = performance.now();
    gateway.proc.child.kill("SIGTERM");

    // The first answer other than 200 is a 503 from a listener that still accepts connections.
    let outcome = await probe(`${gateway.url}/readyz`);
    while (outcome === 200 && performance.now() - signalledAt < 1_000)
      outcome = await probe(`${gateway.url}/readyz`);
    expect(outcome).toBe(503);
    const readyz = await fetch(`${gateway.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({ error: { code: "shutting_down" } });

    // Meanwhile the gateway is alive and still serves new work on new connections.
    expect(await probe(`${gateway.url}/healthz`)).toBe(200);
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);

    // Once the delay is over the listener closes.
    let last: number | string = 503;
    while (last !== "ECONNREFUSED" && performance.now() - signalledAt < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      last = await probe(`${gateway.url}/readyz`);
      if (last !== "ECONNREFUSED") expect([503, "ECONNRESET"]).toContain(last);
    }
    expect(last).toBe("ECONNREFUSED");
    expect(performance.now() - signalledAt).toBeGreaterThan(1_800);

    const exit = await gateway.proc.waitForExit(10_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
  });
});
