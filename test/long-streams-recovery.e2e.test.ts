/**
 * A live stream's hold is closed only by its own settlement, on the shared database too:
 * - the stale-hold sweep (by age, `billing.stale_hold_seconds`) released the hold of a stream
 *   still being delivered, whose settlement then found it closed and billed nothing;
 * - an instance whose clock ran ahead by more than `billing.instance_timeout_seconds` took the
 *   others for dead and settled their live streams early (liveness now reads the database's
 *   clock).
 * PostgreSQL only: SQLite has one process, which settles its own requests.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createUser,
  startTestGateway,
  TEST_BACKEND,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { type SpawnedGateway, spawnGateway } from "./support/spawn-gateway.ts";

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 400,
  messages: [{ role: "user", content }],
  ...extra,
});

async function balance(gateway: TestGateway, key: string) {
  const response = await gateway.request("/v1/account/balance", { key });
  return (await response.json()) as { balance_micros: number; held_micros: number };
}

describe.skipIf(TEST_BACKEND !== "postgres")(
  "PostgreSQL: the stale-hold sweep and a live long stream",
  () => {
    let gateway: TestGateway;
    beforeAll(async () => {
      gateway = await startTestGateway({
        config: {
          // The documented minimum; the sweep runs every third of instance_timeout_seconds.
          billing: { stale_hold_seconds: 60, instance_timeout_seconds: 5 },
        },
      });
    });
    afterAll(() => gateway.close());

    it("bills a stream that is still being delivered after stale_hold_seconds", async () => {
      const user = await createUser(gateway, { balanceMicros: 10_000_000 });
      const before = await balance(gateway, user.key);
      const started = Date.now();
      const response = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: chat("[[sandbox:chunk-delay=1400;words=150]] a long story", {
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      expect(response.status).toBe(200);
      const during = balance(gateway, user.key).then(async (early) => {
        // Past stale_hold_seconds (60 s) plus a sweep, with the stream still running.
        await new Promise((resolve) => setTimeout(resolve, 66_000 - (Date.now() - started)));
        return { early, late: await balance(gateway, user.key) };
      });
      const text = await response.text();
      const { early, late } = await during;
      const elapsed = Date.now() - started;
      expect(text).toContain("[DONE]");
      expect(elapsed).toBeGreaterThan(65_000);
      const usageLine = text
        .split("\n")
        .filter((line) => line.startsWith("data: {") && line.includes('"usage":{'))
        .pop();
      const usage = JSON.parse(usageLine!.slice(6)).usage as { completion_tokens: number };
      expect(usage.completion_tokens).toBeGreaterThan(100);
      // Give the settlement a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const after = await balance(gateway, user.key);
      const usageRows = (await (
        await gateway.request("/v1/account/usage?limit=100", { key: user.key })
      ).json()) as { data: Array<{ request_id: string; cost_micros: number; status: string }> };
      const requestId = response.headers.get("x-request-id");
      const client = new pg.Client({ connectionString: gateway.services.config.database_url });
      await client.connect();
      const inflight = await client.query(
        "select count(*)::int as n from inflight_requests where request_id = $1",
        [requestId],
      );
      await client.end();
      // Every delivered unit is billed: the balance went down by the stream's cost.
      expect({
        heldJustAfterStart: early.held_micros > 0,
        heldAt66sWhileStillStreaming: late.held_micros,
        chargedForDeliveredTokens: before.balance_micros - after.balance_micros > 0,
        inflightRowsLeftAfterStreamEnded: inflight.rows[0].n,
        usageRecord: usageRows.data.find((row) => row.request_id === requestId) ?? null,
      }).toEqual({
        heldJustAfterStart: true,
        heldAt66sWhileStillStreaming: early.held_micros,
        chargedForDeliveredTokens: true,
        inflightRowsLeftAfterStreamEnded: 0,
        usageRecord: expect.objectContaining({ status: "succeeded" }),
      });
    }, 150_000);
  },
);

describe.skipIf(TEST_BACKEND !== "postgres")(
  "PostgreSQL: two instances whose clocks differ by more than instance_timeout_seconds",
  () => {
    let gateway: TestGateway;
    let other: SpawnedGateway | undefined;
    beforeAll(async () => {
      gateway = await startTestGateway();
    });
    afterAll(async () => {
      other?.child.kill("SIGKILL");
      await other?.exited;
      await gateway.close();
    });

    it("does not settle a live instance's stream early because another instance's clock runs ahead", async () => {
      const user = await createUser(gateway, { balanceMicros: 10_000_000 });
      const response = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: chat("[[sandbox:chunk-delay=300;words=150]] a story", {
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      expect(response.status).toBe(200);
      const text = response.text();
      // A second instance on the same database whose clock is two minutes ahead (NTP drift,
      // a VM resumed from suspend): everything else about it is default.
      const dir = mkdtempSync(join(tmpdir(), "skew-"));
      const preload = join(dir, "skew.mjs");
      writeFileSync(preload, "const real = Date.now; Date.now = () => real() + 120_000;\n");
      other = await spawnGateway({
        cwd: dir,
        timeoutMs: 30_000,
        env: {
          DATABASE_URL: gateway.services.config.database_url,
          SWITCHYARD_SANDBOX: "always",
          SWITCHYARD_SANDBOX_URL: gateway.sandboxUrl ?? "",
          NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
        },
      });
      const body = await text;
      expect(body).toContain("[DONE]");
      const usageLine = body
        .split("\n")
        .filter((line) => line.startsWith("data: {") && line.includes('"usage":{'))
        .pop();
      const streamed = JSON.parse(usageLine!.slice(6)).usage as { completion_tokens: number };
      await new Promise((resolve) => setTimeout(resolve, 500));
      const requestId = response.headers.get("x-request-id");
      const rows = (await (
        await gateway.request("/v1/account/usage?limit=100", { key: user.key })
      ).json()) as {
        data: Array<{ request_id: string; status: string; output_tokens: number }>;
      };
      const row = rows.data.find((entry) => entry.request_id === requestId);
      // Every delivered unit is billed: the usage record has the stream's output tokens.
      expect({
        streamedOutputTokens: streamed.completion_tokens,
        billedOutputTokens: row?.output_tokens ?? null,
      }).toEqual({
        streamedOutputTokens: streamed.completion_tokens,
        billedOutputTokens: streamed.completion_tokens,
      });
    }, 90_000);
  },
);
