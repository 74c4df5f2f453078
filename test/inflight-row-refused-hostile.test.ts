/**
 * A stream is made durable before its first byte (its in-flight row: what a restart settles it
 * from). When the database refused that row (disk full, an I/O error, a lock held past
 * busy_timeout), the gateway only logged it and delivered anyway; its checkpoints then updated
 * no row, and if the process died before settling (kill -9, OOM, power) the next start found a
 * hold without a row and released it: the whole delivered stream was free. Now such a request
 * fails before its first byte (its connection is cut, nothing delivered), charged nothing. The crash is simulated
 * in process: the settlement never lands, and the gateway is restarted on the same file.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { startGateway } from "../src/main.ts";

const ADMIN = `sk-${"Durab".repeat(10)}`;
const env = { SWITCHYARD_ADMIN_KEY: ADMIN };

function config(file: string) {
  return loadConfig({
    env,
    cwd: mkdtempSync(join(tmpdir(), "switchyard-durable-")),
    overrides: {
      database_url: file,
      log_level: "silent",
      server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
      routing: { circuit_breaker: { enabled: false } },
      billing: { checkpoint_seconds: 1 },
    },
  });
}

type Patchable = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** Streams ~3 s of output through a gateway whose settlement never lands; then "restarts". */
async function crashAfterDelivery(refuseInflightRow: boolean) {
  const file = join(mkdtempSync(join(tmpdir(), "switchyard-durable-db-")), "g.sqlite");
  const first = await startGateway({ env, config: config(file), print: () => {} });
  const store = first.services.store as unknown as Patchable;
  if (refuseInflightRow) {
    const original = store.recordInflight!.bind(store);
    let refusals = 1;
    store.recordInflight = async (...args) => {
      if (refusals-- > 0)
        throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      return original(...args);
    };
  }
  // The process "dies" before its settlement is written: it never lands.
  store.settle = async () => {
    throw new Error("process killed");
  };
  const answered = fetch(`${first.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      stream: true,
      max_tokens: 4000,
      messages: [{ role: "user", content: "[[sandbox:chunk-delay=30;words=100]] go" }],
    }),
  });
  // A connection cut before any byte is no response at all.
  const { status, text } = await answered.then(
    async (response) => ({ status: response.status, text: await response.text().catch(() => "") }),
    () => ({ status: 0, text: "" }),
  );
  await first.close();

  const second = await startGateway({ env, config: config(file), print: () => {} });
  try {
    const usage = (await (
      await fetch(`${second.url}/v1/account/usage`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).json()) as { data: Array<{ output_tokens: number; cost_micros: number; status: string }> };
    const balance = (await (
      await fetch(`${second.url}/v1/account/balance`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).json()) as { balance_micros: number; held_micros: number };
    return { status, text, usage: usage.data, balance };
  } finally {
    await second.close();
  }
}

describe("a stream whose in-flight row the database refuses, then a crash", {
  timeout: 60_000,
}, () => {
  it("control: with its in-flight row, the restart charges what the checkpoints recorded", async () => {
    const { status, text, usage, balance } = await crashAfterDelivery(false);
    expect(status).toBe(200);
    expect(text.length).toBeGreaterThan(1000);
    expect(balance.held_micros).toBe(0);
    expect(usage.length).toBe(1);
    expect(usage[0]!.output_tokens).toBeGreaterThan(50);
    expect(usage[0]!.cost_micros).toBeGreaterThan(0);
  });

  it("fails before its first byte when the row is refused: nothing delivered, nothing charged", async () => {
    const { status, text, usage, balance } = await crashAfterDelivery(true);
    // The connection is cut before a status line: no answer, nothing of the stream.
    expect({ status, delivered: text.includes("chat.completion.chunk") }).toEqual({
      status: 0,
      delivered: false,
    });
    expect(balance.held_micros).toBe(0);
    expect(usage.map((row) => row.cost_micros).reduce((sum, cost) => sum + cost, 0)).toBe(0);
  });
});
