/**
 * SQLite serves one process (holds live in that process's memory), and a gateway names itself
 * in `<file>.gateway`. A second `switchyard start` on the same file (a restart that overlaps the
 * old process, a second replica on a shared volume) used to start anyway: its start-up recovery
 * settled the live gateway's requests in flight and released their holds, and on a port already
 * taken it did that before failing, then removed the live gateway's claim. It is refused first.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const ADMIN = `sk-${"Twice".repeat(10)}`;
const children: SpawnedGateway[] = [];
afterEach(() => {
  for (const gateway of children.splice(0)) gateway.child.kill("SIGKILL");
});

describe("a second `switchyard start` on an SQLite file a live gateway serves", {
  timeout: 60_000,
}, () => {
  it("is refused, and leaves the live gateway's streams alone", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-twice-"));
    const env = {
      DATABASE_URL: join(cwd, "g.sqlite"),
      SWITCHYARD_ADMIN_KEY: ADMIN,
      SWITCHYARD_SANDBOX: "always",
    };
    const first = await spawnGateway({ cwd, env });
    children.push(first);
    const response = await fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 4000,
        messages: [{ role: "user", content: "[[sandbox:chunk-delay=20;words=500]] go" }],
      }),
    });
    expect(response.status).toBe(200);
    const streamed = response.text();
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    let secondStarted = false;
    try {
      const second = await spawnGateway({ cwd, env, timeoutMs: 15_000 });
      children.push(second);
      secondStarted = true;
    } catch {
      // refused: what should happen
    }
    const text = await streamed;
    const tail = text.slice(-300);
    expect({ secondStarted, streamEnded: text.includes("[DONE]") }, tail).toEqual({
      secondStarted: false,
      streamEnded: true,
    });
  });
});

describe("a mistaken second `switchyard start` on the same port and SQLite file", {
  timeout: 60_000,
}, () => {
  it("fails on the port without touching the live gateway's requests in flight", async () => {
    const { freePort } = await import("./support/tcp-proxy.ts");
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-twice-port-"));
    const port = String(await freePort());
    const env = {
      DATABASE_URL: join(cwd, "g.sqlite"),
      SWITCHYARD_ADMIN_KEY: ADMIN,
      SWITCHYARD_SANDBOX: "always",
      PORT: port,
    };
    const first = await spawnGateway({ cwd, env });
    children.push(first);
    const response = await fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 4000,
        messages: [{ role: "user", content: "[[sandbox:chunk-delay=20;words=500]] go" }],
      }),
    });
    expect(response.status).toBe(200);
    const streamed = response.text();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const second = await spawnGateway({ cwd, env, timeoutMs: 15_000 }).then(
      (gateway) => {
        children.push(gateway);
        return "started";
      },
      (error: Error) => error.message.split("\n")[0],
    );
    const text = await streamed;
    const { existsSync } = await import("node:fs");
    expect({
      second,
      streamEnded: text.includes("[DONE]"),
      // The live gateway's claim (what `accounts credit` checks before a debit) is still there.
      claimKept: existsSync(join(cwd, "g.sqlite.gateway")),
    }).toEqual({
      second: expect.stringContaining("exited with"),
      streamEnded: true,
      claimKept: true,
    });
  });
});
