/**
 * The sandbox in a worker thread (`startSandboxIsolated`): it serves over HTTP like the
 * in-process one, this thread keeps its pace while the worker draws large pictures, `close`
 * leaves nothing running, and a worker that runs out of memory is replaced on the same port.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { longestStall } from "../../test/support/loop-stall.ts";
import { startSandboxIsolated } from "./isolated.ts";
import { chatBody, postChat, waitFor } from "./test-kit.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

describe("startSandboxIsolated", () => {
  it("serves the vendor APIs from a worker thread without holding this one", async () => {
    const sandbox = await startSandboxIsolated();
    try {
      const reply = await postChat(sandbox.url, chatBody("Hello worker"));
      expect(reply.status).toBe(200);
      const started = performance.now();
      const { stallMs: gap, result } = await longestStall(async () => {
        const response = await fetch(`${sandbox.url}/openai/v1/images/generations`, {
          method: "POST",
          headers: { authorization: "Bearer sk-test", "content-type": "application/json" },
          body: JSON.stringify({
            model: "gpt-image-2",
            prompt: "two large pictures",
            size: "3840x2160",
            n: 2,
          }),
        });
        return { status: response.status, body: (await response.json()) as { data: unknown[] } };
      });
      expect(result.status).toBe(200);
      expect(result.body.data).toHaveLength(2);
      // The drawing took a while, and this thread kept ticking all along.
      expect(performance.now() - started).toBeGreaterThan(500);
      expect(gap).toBeLessThan(250);
      const stats = await (await fetch(`${sandbox.url}/__sandbox/stats`)).json();
      expect(stats).toMatchObject({ requests: 2, completed: 2, open: 0 });
    } finally {
      await sandbox.close();
    }
  });

  it("releases its port on close; closing twice is fine", async () => {
    const sandbox = await startSandboxIsolated();
    await sandbox.close();
    await sandbox.close();
    await expect(fetch(`${sandbox.url}/__sandbox/stats`)).rejects.toThrow(/fetch failed/);
    // The port is free again: another sandbox may listen on it.
    const again = await startSandboxIsolated({ port: sandbox.port });
    expect(again.url).toBe(sandbox.url);
    await again.close();
  });

  it("leaves nothing running: a process that starts and closes it exits by itself", async () => {
    const script =
      'import("./src/sandbox/isolated.ts").then(async ({ startSandboxIsolated }) => {' +
      "const sandbox = await startSandboxIsolated();" +
      'const response = await fetch(sandbox.url + "/__sandbox/stats");' +
      "console.log(response.status);" +
      "await sandbox.close();" +
      'console.log("closed");' +
      "});";
    const child = spawn(process.execPath, ["--import", "tsx", "-e", script], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    clearTimeout(timer);
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output.trim().split("\n")).toEqual(["200", "closed"]);
  });

  it("fails to start, with the reason, when its port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await expect(startSandboxIsolated({ port })).rejects.toThrow(/sandbox did not start/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("replaces a worker that runs out of memory, on the same port", async () => {
    const exits: { exitCode: number; restarted: boolean }[] = [];
    const sandbox = await startSandboxIsolated({
      heapLimitMb: 64,
      onWorkerExit: ({ exitCode, restarted }) => exits.push({ exitCode, restarted }),
    });
    try {
      // 24 MB bodies: the request log keeps them until the heap runs out.
      const content = "x ".repeat(60_000);
      const huge = chatBody("", {
        messages: Array.from({ length: 200 }, () => ({ role: "user", content })),
      });
      for (let i = 0; i < 10 && exits.length === 0; i++) {
        await postChat(sandbox.url, huge).then(
          (response) => response.arrayBuffer(),
          () => undefined,
        );
      }
      expect(exits[0]).toEqual({ exitCode: 1, restarted: true });
      await waitFor(
        () =>
          fetch(`${sandbox.url}/__sandbox/stats`).then(
            (response) => response.ok,
            () => false,
          ),
        10_000,
      );
      const reply = await postChat(sandbox.url, chatBody("Still here?"));
      expect(reply.status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
