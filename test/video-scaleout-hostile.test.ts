/**
 * Asynchronous video tasks under scale-out (several gateway instances on one PostgreSQL
 * database and one Redis) and against a hostile client and a misbehaving vendor: the video
 * generated is the video billed (null or mistyped billed fields in `parameters`), a vendor that
 * repeats a task id gets one video charged once, a task outlives the instance that submitted it
 * across a reload, and polls racing across instances charge once. The scale-out tests need
 * SWITCHYARD_TEST_BACKEND=postgres; the others run on either backend.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { randomBase62 } from "../src/store/index.ts";
import { clusterAvailable, freshDatabase } from "./support/cluster.ts";
import {
  balanceOf,
  createUser,
  requestsTo,
  startTestGateway,
  TEST_BACKEND,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { REDIS_URL } from "./support/redis.ts";
import { xaiVideoModel } from "./support/vendor-models.ts";

const PATH = "/v1/videos/generations";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scaleOut = TEST_BACKEND === "postgres" && (await clusterAvailable());

interface TaskJson {
  id: string;
  status: string;
  provider_task_id: string | null;
  content: { video_url: string } | null;
  usage?: Record<string, unknown> | null;
  billing: { state: string; held_micros: number; cost_micros: number; billed_seconds: number };
  webhook?: { state: string; attempts: unknown[] } | null;
}

/** A stand-in xAI video vendor the test scripts. */
async function scriptedVendor(options: { requestId?: () => string; pollDelayMs?: number } = {}) {
  let next = 0;
  const answers = new Map<string, unknown>();
  let polls = 0;
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", async () => {
      response.setHeader("content-type", "application/json");
      if (request.method === "POST" && request.url === "/videos/generations") {
        const id = options.requestId?.() ?? `req_${++next}_${randomBase62(6)}`;
        response.end(JSON.stringify({ request_id: id }));
        return;
      }
      polls++;
      if (options.pollDelayMs) await sleep(options.pollDelayMs);
      const id = decodeURIComponent((request.url ?? "").split("/").pop() ?? "");
      const answer = answers.get(id);
      const body = typeof answer === "function" ? answer() : answer;
      response.end(JSON.stringify(body ?? { status: "pending" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    polls: () => polls,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function follow(
  request: TestGateway["request"],
  id: string,
  key: string,
  ms = 8000,
): Promise<TaskJson> {
  const deadline = Date.now() + ms;
  for (;;) {
    const task = (await (await request(`${PATH}/${id}`, { key })).json()) as TaskJson;
    if (["settled", "released"].includes(task.billing.state)) return task;
    if (Date.now() > deadline) return task;
    await sleep(50);
  }
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile submit bodies (either backend, the sandbox's DashScope emulation).
// ---------------------------------------------------------------------------------------------
describe("hostile submit bodies: the video generated is the video billed", () => {
  let gateway: TestGateway;
  let user: { key: string };
  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 } },
    });
    user = await createUser(gateway, { balanceMicros: 50_000_000 });
  });
  afterAll(() => gateway?.close());

  const submit = (json: unknown) => gateway.request(PATH, { key: user.key, json });

  it("parameters.duration: null does not get a 5 s video billed as 2 s", async () => {
    // `null` is left out and the billed duration sent instead (before: it reached the vendor as
    // is, which made its default 5 s, and the client paid for 2 s).
    const response = await submit({
      model: "motion2.6-t2v",
      duration: 2,
      resolution: "720p",
      input: { prompt: "a lighthouse [[sandbox:video-seconds=0.3]]" },
      parameters: { size: "1280*720", duration: null, prompt_extend: false },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as TaskJson;
    const task = await follow(gateway.request, accepted.id, user.key);
    const made = (task.usage as { output_video_duration?: number } | null)?.output_video_duration;
    // A 2 s video at 100 000 a second, as billed.
    expect({ status: task.status, generatedSeconds: made, cost: task.billing.cost_micros }).toEqual(
      { status: "succeeded", generatedSeconds: 2, cost: 2 * 100_000 },
    );
  });

  it("parameters.size: null does not get a 1080p video billed at the 720p price", async () => {
    // Same gap for the tier: `size: null` reached the vendor, which made its default 1920*1080.
    const response = await submit({
      model: "motion2.6-t2v",
      duration: 2,
      resolution: "720p",
      input: { prompt: "a harbour [[sandbox:video-seconds=0.3]]" },
      parameters: { size: null, duration: 2, prompt_extend: false },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as TaskJson;
    const task = await follow(gateway.request, accepted.id, user.key);
    const tier = (task.usage as { SR?: number } | null)?.SR;
    expect({ status: task.status, generatedTier: tier, cost: task.billing.cost_micros }).toEqual({
      status: "succeeded",
      generatedTier: 720,
      cost: 2 * 100_000,
    });
  });

  it.each([
    ["parameters.duration", { duration: "10" }],
    ["parameters.duration", { duration: [2] }],
    ["parameters.size", { size: 1080 }],
    ["parameters.size", { size: "3840*2160" }],
    ["parameters.resolution", { resolution: 1080 }],
  ])(
    "refuses %s of the wrong type or unknown (%j) before anything is held",
    async (param, parameters) => {
      const before = await balanceOf(gateway, user.key);
      const response = await submit({
        model: "motion2.6-t2v",
        duration: 2,
        resolution: "720p",
        input: { prompt: "a quay" },
        parameters,
      });
      expect(response.status).toBe(400);
      // The DashScope dialect of family A: `{code, message, request_id}`, the field in the message.
      const body = (await response.json()) as { code?: string; message?: string };
      expect(body.code).toBe("InvalidParameter");
      expect(body.message).toContain(param);
      expect(await balanceOf(gateway, user.key)).toBe(before);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// A vendor that reports a task id already in use (either backend).
// ---------------------------------------------------------------------------------------------
describe("vendor reports a task id the gateway already follows", () => {
  it("does not charge two tasks for the one vendor job", async () => {
    // The vendor answers the second submission with the request_id of the first (a replay, a
    // vendor-side idempotency cache, a bug). Both tasks follow the same vendor job: one video is
    // made, and the account must not pay for it twice.
    const vendor = await scriptedVendor({ requestId: () => "req_same" });
    const gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 },
        catalog: { models: [xaiVideoModel("rogue-video", vendor.url, { perSecond: 100_000 })] },
      },
    });
    try {
      const user = await createUser(gateway, { balanceMicros: 10_000_000 });
      const before = await balanceOf(gateway, user.key);
      const ids: string[] = [];
      for (const prompt of ["a cat", "a dog"]) {
        const response = await gateway.request(PATH, {
          key: user.key,
          json: { model: "rogue-video", prompt, duration: 2, resolution: "480p" },
        });
        if (response.status === 202) ids.push(((await response.json()) as TaskJson).id);
      }
      vendor.answers.set("req_same", {
        status: "done",
        video: { url: "https://cdn.example/one.mp4", duration: 2 },
      });
      const tasks = await Promise.all(ids.map((id) => follow(gateway.request, id, user.key)));
      const charged = before - (await balanceOf(gateway, user.key));
      expect({
        succeeded: tasks.filter((task) => task.status === "succeeded").length,
        charged,
      }).toEqual({ succeeded: 1, charged: 2 * 100_000 });
    } finally {
      await gateway.close();
      await vendor.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Scale-out: several instances in this process on one PostgreSQL database and one Redis.
// ---------------------------------------------------------------------------------------------
describe.skipIf(!scaleOut)("scale-out: video tasks across instances", { timeout: 60_000 }, () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  async function database() {
    const db = await freshDatabase();
    cleanups.unshift(() => db.drop());
    return db;
  }

  /** One gateway instance from a YAML file of its own (so it can be reloaded). */
  async function instanceFromFile(yaml: string) {
    const file = join(mkdtempSync(join(tmpdir(), "review-video-")), "switchyard.yaml");
    writeFileSync(file, yaml);
    const env = { SWITCHYARD_CONFIG: file };
    const gateway: RunningGateway = await startGateway({
      env,
      config: loadConfig({ env }),
      print: () => {},
    });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await gateway.close();
    });
    return {
      gateway,
      request: requestsTo(gateway.url),
      rewrite: (next: string) => writeFileSync(file, next),
      async close() {
        closed = true;
        await gateway.close();
      },
    };
  }

  const yamlFor = (
    databaseUrl: string,
    prefix: string,
    vendorUrl: string,
    upstream: string,
    extra = "",
  ) => `
database_url: ${JSON.stringify(databaseUrl)}
redis: { url: ${JSON.stringify(REDIS_URL)}, key_prefix: ${JSON.stringify(prefix)} }
log_level: silent
server: { port: 0, host: 127.0.0.1, shutdown_grace_seconds: 1, drain_delay_seconds: 0 }
routing: { circuit_breaker: { enabled: false } }
tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100, lease_seconds: 1 }
webhooks: { allow_loopback: true, retry_base_ms: 200 }
${extra}
catalog:
  models:
    - id: rogue-video
      endpoint: video
      family: gen-video
      display_name: Rogue video
      owned_by: self-hosted
      capabilities: { resolutions: ["480p"], durations: [1, 2, 3, 4, 5, 6], aspect_ratios: ["16:9"], video_input: "t2v+i2v" }
      pricing: { per_video_second: { "480p": 100000 } }
      routes:
        - { vendor: test-vendor, adapter: xai-video, base_url: ${JSON.stringify(vendorUrl)}, upstream_model: ${upstream} }
`;

  async function userOn(request: TestGateway["request"], adminKey: string, balance: number) {
    const account = await request("/v1/admin/accounts", {
      key: adminKey,
      json: { email: `u-${randomBase62(8)}@example.com`, balance_micros: balance },
    });
    expect(account.status).toBe(201);
    const { id } = (await account.json()) as { id: string };
    const created = await request(`/v1/admin/accounts/${id}/keys`, { key: adminKey, json: {} });
    expect(created.status).toBe(201);
    return { accountId: id, key: ((await created.json()) as { key: string }).key };
  }

  for (const moved of [false, true])
    it(`a task submitted on an instance that then leaves is finished by the survivor after a catalog reload (${moved ? "model moved to another upstream model" : "control: route unchanged"})`, async () => {
      // Scale-out + reload: the route a task was submitted to is remembered only in the memory
      // of the instance that submitted it (task-models.ts). After a SIGHUP reload that moves the
      // model to another upstream model, only that instance can still follow the task; once it
      // stops (a rolling restart, a crash) no instance polls the task, which sits `queued` with
      // its hold taken until tasks.max_age_seconds and is then expired: the client never gets
      // the video the vendor made.
      const vendor = await scriptedVendor();
      cleanups.push(() => vendor.close());
      const db = await database();
      const prefix = `review-${randomBase62(8)}:`;
      const first = yamlFor(db.url, prefix, vendor.url, "g1");
      const a = await instanceFromFile(first);
      const b = await instanceFromFile(first);
      const adminKey = a.gateway.bootstrapKey!;
      const user = await userOn(a.request, adminKey, 10_000_000);
      const response = await a.request(PATH, {
        key: user.key,
        json: { model: "rogue-video", prompt: "a fox", duration: 2, resolution: "480p" },
      });
      expect(response.status).toBe(202);
      const accepted = (await response.json()) as TaskJson;
      // Both instances reload to a catalog that moves the model to another upstream model.
      const second = yamlFor(db.url, prefix, vendor.url, moved ? "g2" : "g1");
      a.rewrite(second);
      b.rewrite(second);
      expect(a.gateway.reload()).toBeDefined();
      expect(b.gateway.reload()).toBeDefined();
      await sleep(300);
      await a.close(); // the submitting instance leaves
      vendor.answers.set(accepted.provider_task_id!, {
        status: "done",
        video: { url: "https://cdn.example/fox.mp4", duration: 2 },
      });
      const task = await follow(b.request, accepted.id, user.key, 6000);
      expect({
        status: task.status,
        billing: task.billing.state,
        cost: task.billing.cost_micros,
      }).toEqual({ status: "succeeded", billing: "settled", cost: 200_000 });
    });

  it("two instances polling one task (slow vendor, lease shorter than a poll, durations that change) charge it once, within its hold, and deliver one signed webhook", async () => {
    // A vendor whose polls outlast the 1 s lease, so both instances poll the same task at
    // once; each poll reports a different duration (2, 9, 1, …). Exactly one finalization,
    // one charge ≤ hold, one usage record, balance never below zero, and the webhook signed
    // with the account's secret.
    let call = 0;
    const vendor = await scriptedVendor({ pollDelayMs: 1300 });
    cleanups.push(() => vendor.close());
    const received: Array<{ body: string; signature: string; eventId: string }> = [];
    const hook = createServer((request: IncomingMessage, response) => {
      const parts: Buffer[] = [];
      request.on("data", (part: Buffer) => parts.push(part));
      request.on("end", () => {
        received.push({
          body: Buffer.concat(parts).toString("utf8"),
          signature: String(request.headers["switchyard-signature"] ?? ""),
          eventId: String(request.headers["switchyard-event-id"] ?? ""),
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => hook.close(resolve)));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const db = await database();
    const prefix = `review-${randomBase62(8)}:`;
    const yaml = yamlFor(db.url, prefix, vendor.url, "g1");
    const a = await instanceFromFile(yaml);
    const b = await instanceFromFile(yaml);
    const c = await instanceFromFile(yaml);
    const adminKey = a.gateway.bootstrapKey!;
    const user = await userOn(a.request, adminKey, 1_000_000); // covers the 600 000 hold only
    const response = await b.request(PATH, {
      key: user.key,
      json: {
        model: "rogue-video",
        prompt: "a hare",
        duration: 6,
        resolution: "480p",
        webhook_url: hookUrl,
      },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as TaskJson;
    const durations = [2, 9, 1, 4, 30, 5];
    vendor.answers.set(accepted.provider_task_id!, () => ({
      status: "done",
      video: {
        url: "https://cdn.example/hare.mp4",
        duration: durations[call++ % durations.length],
      },
    }));
    const task = await follow(c.request, accepted.id, user.key, 15_000);
    await sleep(2500); // every straggling poll has ended
    const secret = (
      (await (await a.request("/v1/account/webhook-secret", { key: user.key })).json()) as {
        secret: string;
      }
    ).secret;
    const ledger = await query<{ kind: string; amount_micros: string; hold_micros: string }>(
      db.url,
      "select kind, amount_micros, hold_micros from ledger_entries where request_id = $1",
      [accepted.id],
    );
    const usage = await query<{ n: string }>(
      db.url,
      "select count(*) as n from usage_records where request_id = $1",
      [accepted.id],
    );
    const account = await query<{ balance_micros: string; held_micros: string }>(
      db.url,
      "select balance_micros, held_micros from accounts where id = $1",
      [user.accountId],
    );
    expect(task.status).toBe("succeeded");
    expect(task.billing.state).toBe("settled");
    expect(task.billing.cost_micros).toBeLessThanOrEqual(600_000);
    expect(task.billing.cost_micros).toBe(Math.min(6, task.billing.billed_seconds) * 100_000);
    expect(ledger.filter((entry) => entry.kind === "charge")).toHaveLength(1);
    expect(ledger.filter((entry) => entry.kind === "release")).toHaveLength(0);
    expect(Number(usage[0]?.n)).toBe(1);
    expect(Number(account[0]?.held_micros)).toBe(0);
    expect(Number(account[0]?.balance_micros)).toBe(1_000_000 - task.billing.cost_micros);
    expect(received.length).toBeGreaterThanOrEqual(1);
    for (const delivery of received) {
      const t = /t=(\d+)/.exec(delivery.signature)?.[1] ?? "";
      const v1 = /v1=([0-9a-f]+)/.exec(delivery.signature)?.[1] ?? "";
      const expected = createHmac("sha256", secret)
        .update(`${t}.`)
        .update(delivery.body)
        .digest("hex");
      expect(v1).toBe(expected);
      expect(delivery.eventId).toBe(accepted.id);
      expect((JSON.parse(delivery.body) as TaskJson).billing.state).toBe("settled");
    }
    expect(received).toHaveLength(1);
    expect(vendor.polls()).toBeGreaterThan(0);
  });
});
