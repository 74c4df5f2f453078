import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { answerTimeoutError } from "./answer-deadline.ts";
import { createDeadlineSweeper } from "./deadline-sweeper.ts";
import { createHttpClient } from "./http-client.ts";

/** `/trickle` answers 200 at once, then a byte every 50 ms, forever; `/whole` a whole body. */
let server: Server;
let url: string;
let closedTrickles = 0;
beforeAll(async () => {
  server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    if (request.url === "/whole") {
      response.end('{"ok":true}');
      return;
    }
    response.write("{");
    const timer = setInterval(() => response.write(" "), 50);
    response.on("close", () => {
      clearInterval(timer);
      closedTrickles += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A client with long timeouts (a 20 s total deadline) whose sweeper runs on a hand-set clock. */
function clientOnClock() {
  let clock = 1_000;
  const deadlines = createDeadlineSweeper({
    expired: answerTimeoutError,
    now: () => clock,
    timer: false,
  });
  const http = createHttpClient(
    { connectMs: 1000, firstByteMs: 10_000, idleMs: 10_000 },
    undefined,
    { deadlines },
  );
  return {
    http,
    deadlines,
    advance(ms: number) {
      clock += ms;
      deadlines.sweep(clock);
    },
  };
}

describe("long total deadlines (the sweeper)", () => {
  it("ends a trickled body once the deadline has passed, as a timeout, and closes the call", async () => {
    const { http, deadlines, advance } = clientOnClock();
    const closedBefore = closedTrickles;
    const response = await http.get(`${url}/trickle`, { headers: {}, totalDeadline: true });
    expect(deadlines.size).toBe(1);
    const reading = response.body.text().then(
      () => undefined,
      (error: unknown) => error,
    );
    advance(19_000);
    expect(deadlines.size).toBe(1);
    advance(1_001);
    const error = await reading;
    expect(UpstreamError.isInstance(error) && error.kind).toBe("timeout");
    expect((error as Error).message).toContain("20000 ms");
    await expect.poll(() => closedTrickles).toBe(closedBefore + 1);
    expect(deadlines.size).toBe(0);
    await http.close();
  });

  it("ends an iterated body the same way", async () => {
    const { http, advance } = clientOnClock();
    const response = await http.get(`${url}/trickle`, { headers: {}, totalDeadline: true });
    const reading = (async () => {
      for await (const _chunk of response.body) {
        /* trickle */
      }
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    advance(20_001);
    const error = await reading;
    expect(UpstreamError.isInstance(error) && error.kind).toBe("timeout");
    await http.close();
  });

  it("forgets a body once it is read whole or dropped, and leaves calls that did not ask alone", async () => {
    const { http, deadlines, advance } = clientOnClock();
    const whole = await http.get(`${url}/whole`, { headers: {}, totalDeadline: true });
    expect(deadlines.size).toBe(1);
    expect(await whole.body.json()).toEqual({ ok: true });
    expect(deadlines.size).toBe(0);
    const iterated = await http.get(`${url}/whole`, { headers: {}, totalDeadline: true });
    for await (const _chunk of iterated.body) {
      /* read it all */
    }
    expect(deadlines.size).toBe(0);
    const dropped = await http.get(`${url}/trickle`, { headers: {}, totalDeadline: true });
    expect(deadlines.size).toBe(1);
    dropped.body.destroy();
    expect(deadlines.size).toBe(0);
    const unbounded = await http.get(`${url}/trickle`, { headers: {} });
    expect(deadlines.size).toBe(0);
    advance(60_000);
    const outcome = await Promise.race([
      unbounded.body.text().then(
        () => "ended",
        () => "failed",
      ),
      new Promise((resolve) => setTimeout(() => resolve("still reading"), 300)),
    ]);
    unbounded.body.destroy();
    expect(outcome).toBe("still reading");
    await http.close();
  });
});

describe("createDeadlineSweeper", () => {
  it("runs its timer only while bodies are watched", async () => {
    const deadlines = createDeadlineSweeper({ expired: () => new Error("late"), everyMs: 10 });
    let destroyedWith: Error | undefined;
    const body = {
      destroyed: false,
      destroy(error?: Error) {
        destroyedWith = error;
        body.destroyed = true;
      },
    };
    deadlines.watch(body, deadlines.now() + 30, 30);
    await expect.poll(() => destroyedWith?.message, { timeout: 2000 }).toBe("late");
    await expect.poll(() => deadlines.size).toBe(0);
    deadlines.close();
  });
});
