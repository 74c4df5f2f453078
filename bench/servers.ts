/**
 * @module bench/servers
 * Starting the processes the benchmarks measure (the sandbox, the floor proxy, a gateway) and
 * preparing a gateway for load: an account with a large balance and a key whose quotas are on,
 * with limits high enough never to refuse the load, so every request pays for the rate window,
 * the concurrency lease and the hold.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface Server {
  child: ChildProcess;
  url: string;
}

/** Starts `command args` in `cwd` and resolves once its output matches `banner` (group 1: URL). */
export function startServer(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; banner: RegExp },
): Promise<Server> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise<Server>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = options.banner.exec(output);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} (in ${options.cwd}) exited with ${code}: ${output}`)),
    );
  });
}

/** The banner `switchyard start` prints once it listens. */
export const GATEWAY_BANNER = /Switchyard listening on (http:\/\/\S+)/;
/** The banner of the sandbox and of the floor proxy. */
export const LISTENING_BANNER = /listening on (http:\/\/\S+)/;

/** Creates the load's account and quota key through the admin API; returns the key. */
export async function createLoadKey(gatewayUrl: string, adminKey: string): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(gatewayUrl + path, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (response.status !== 201)
      throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { id: string; key: string };
  };
  const account = await call("/v1/admin/accounts", {
    email: "bench@example.com",
    balance_micros: 1_000_000_000_000,
  });
  const key = await call(`/v1/admin/accounts/${account.id}/keys`, {
    name: "bench",
    rpm: 10_000_000,
    concurrency: 1_000,
  });
  return key.key;
}
