/**
 * The request's own abort: what the call paths and undici read of a signal behaves as an
 * `AbortController`'s signal does, and undici really ends a request with it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { CallAbort } from "./call-abort.ts";

describe("CallAbort", () => {
  it("calls each listener once, in order, and not after it is removed", () => {
    const abort = new CallAbort();
    const calls: string[] = [];
    const removed = () => calls.push("removed");
    abort.addEventListener("abort", () => calls.push("first"));
    abort.addEventListener("abort", removed);
    abort.addEventListener("abort", () => calls.push("second"));
    abort.removeEventListener("abort", removed);
    abort.abort("why");
    abort.abort("again");
    expect(calls).toEqual(["first", "second"]);
    expect(abort.aborted).toBe(true);
    expect(abort.reason).toBe("why");
  });

  it("gives an AbortError as the reason when none is given, like AbortController", () => {
    const ours = new CallAbort();
    const node = new AbortController();
    ours.abort();
    node.abort();
    expect(ours.reason).toBeInstanceOf(DOMException);
    expect((ours.reason as DOMException).name).toBe((node.signal.reason as DOMException).name);
  });

  it("runs every listener when one throws, then throws the first error", () => {
    const abort = new CallAbort();
    const calls: string[] = [];
    abort.addEventListener("abort", () => {
      calls.push("first");
      throw new Error("first failed");
    });
    abort.addEventListener("abort", () => {
      calls.push("second");
      throw new Error("second failed");
    });
    abort.addEventListener("abort", () => calls.push("third"));
    expect(() => abort.abort()).toThrow("first failed");
    expect(calls).toEqual(["first", "second", "third"]);
    expect(abort.aborted).toBe(true);
  });

  it("does not keep a listener added after it aborted", () => {
    const abort = new CallAbort();
    abort.abort();
    let called = false;
    abort.addEventListener("abort", () => {
      called = true;
    });
    abort.abort();
    expect(called).toBe(false);
  });

  describe("as undici's signal", () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

    async function silentServer(): Promise<string> {
      const open: Array<() => void> = [];
      server = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" });
        response.write("partial");
        open.push(() => response.destroy());
      });
      server.on("close", () => {
        for (const close of open) close();
      });
      await new Promise<void>((done) => server?.listen(0, "127.0.0.1", () => done()));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    }

    it("ends a request whose answer never completes, with the abort's reason", async () => {
      const url = await silentServer();
      const abort = new CallAbort();
      const response = await request(url, { signal: abort });
      const body = response.body.text();
      const reason = new Error("client gone");
      abort.abort(reason);
      await expect(body).rejects.toBe(reason);
      server?.closeAllConnections();
    });

    it("refuses to start a request already aborted", async () => {
      const url = await silentServer();
      const abort = new CallAbort();
      abort.abort();
      await expect(request(url, { signal: abort })).rejects.toMatchObject({ name: "AbortError" });
    });
  });
});
