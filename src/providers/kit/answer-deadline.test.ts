import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { createHttpClient } from "./http-client.ts";

/** Answers 200 at once, then one byte every 50 ms, forever. */
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write("{");
    const timer = setInterval(() => response.write(" "), 50);
    response.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!UpstreamError.isInstance(error)) throw new Error(`expected an UpstreamError: ${error}`);
  return error;
}

describe("totalDeadline", () => {
  const http = createHttpClient({ connectMs: 1000, firstByteMs: 150, idleMs: 150 });
  afterAll(() => http.close());

  it("ends a trickled body at first-byte plus idle timeout, as a timeout", async () => {
    const started = Date.now();
    const response = await http.get(url, { headers: {}, totalDeadline: true });
    const error = await failure(response.body.text());
    expect(error.kind).toBe("timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("leaves a caller's own abort an abort, not a timeout", async () => {
    const caller = new AbortController();
    const response = await http.get(url, {
      headers: {},
      signal: caller.signal,
      totalDeadline: true,
    });
    setTimeout(() => caller.abort(), 50);
    const error = await response.body.text().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeDefined();
    expect(UpstreamError.isInstance(error) && error.kind === "timeout").toBe(false);
  });

  it("does not bound a call that did not ask for it (the idle timeout alone never fires)", async () => {
    const response = await http.get(url, { headers: {} });
    const outcome = await Promise.race([
      response.body.text().then(
        () => "ended",
        () => "failed",
      ),
      new Promise((resolve) => setTimeout(() => resolve("still reading"), 600)),
    ]);
    response.body.destroy();
    expect(outcome).toBe("still reading");
  });
});
