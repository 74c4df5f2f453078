import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseSandboxArgs } from "./main.ts";

describe("parseSandboxArgs", () => {
  it("defaults to a free port on 127.0.0.1 and reads --port/--host", () => {
    expect(parseSandboxArgs([])).toEqual({ port: 0, host: "127.0.0.1" });
    expect(parseSandboxArgs(["--port", "8089", "--host", "0.0.0.0"])).toEqual({
      port: 8089,
      host: "0.0.0.0",
    });
    expect(() => parseSandboxArgs(["--port", "http"])).toThrow(/--port must be an integer/);
    expect(() => parseSandboxArgs(["--verbose"])).toThrow();
  });
});

describe("main entry", () => {
  it("prints the URL, serves, and exits 0 on SIGTERM", async () => {
    const entry = fileURLToPath(new URL("./main.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", entry, "--port", "0"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.setEncoding("utf8");
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (data: string) => {
        output += data;
        const match = /Switchyard sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", () => reject(new Error(`exited early: ${output}`)));
    });
    const stats = await (await fetch(`${url}/__sandbox/stats`)).json();
    expect(stats).toEqual({ requests: 0, completed: 0, aborted: 0, dropped: 0, open: 0 });
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  }, 20_000);
});
