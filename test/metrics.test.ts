/**
 * `/metrics` end to end: who may scrape it, that it is valid Prometheus text, and that a scripted
 * set of requests (through the openai SDK) moves it by exactly what happened — requests by model,
 * vendor, status and stream; upstream attempts and failures by vendor; tokens and cost equal to
 * the usage records; quota refusals; nothing left in flight or held.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createUser,
  startTestGateway,
  TEST_BACKEND,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { type Exposition, parseExposition } from "./support/prometheus-text.ts";

const TOKEN = "scrape-token-0123456789abcdef";
const CHAT = "/v1/chat/completions";
const EMBEDDINGS = "/v1/embeddings";

async function scrape(gateway: TestGateway, key: string = TOKEN): Promise<Exposition> {
  const response = await gateway.request("/metrics", { key });
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

interface UsageRow {
  request_id: string;
  model: string;
  status: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
}

describe("GET /metrics", () => {
  let gateway: TestGateway;
  let user: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    gateway = await startTestGateway({ config: { metrics: { token: TOKEN } } });
    user = await createUser(gateway);
  });
  afterAll(() => gateway.close());

  it("answers 401 without credentials, 403 for a key that is not an admin's", async () => {
    const anonymous = await gateway.request("/metrics");
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain("switchyard_");
    expect((await gateway.request("/metrics", { key: "not-the-token-0123456789" })).status).toBe(
      401,
    );
    const notAdmin = await gateway.request("/metrics", { key: user.key });
    expect(notAdmin.status).toBe(403);
    expect(await notAdmin.text()).not.toContain("switchyard_");
  });

  it("tells a non-admin key what /metrics takes: an admin key or the scrape token, no login session", async () => {
    const notAdmin = await gateway.request("/metrics", { key: user.key });
    expect(notAdmin.status).toBe(403);
    const { error } = (await notAdmin.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("admin_required");
    expect(error.message).toMatch(/scrape token/);
    expect(error.message).toMatch(/admin account's (own )?key/);
    expect(error.message).not.toMatch(/session/);
  });

  it("serves valid Prometheus text for the scrape token and for an admin key", async () => {
    for (const key of [TOKEN, gateway.adminKey]) {
      const response = await gateway.request("/metrics", { key });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      const exposition = parseExposition(await response.text());
      expect(exposition.types.get("switchyard_requests_total")).toBe("counter");
      expect(exposition.types.get("http_server_request_duration_seconds")).toBe("histogram");
      expect(exposition.types.get("process_cpu_seconds_total")).toBe("counter");
      expect(exposition.read("switchyard_store_up")).toBe(1);
      expect(exposition.read("switchyard_video_tasks", { state: "queued" })).toBe(0);
      expect(exposition.types.has("switchyard_redis_up")).toBe(TEST_BACKEND === "postgres");
      if (TEST_BACKEND === "postgres") expect(exposition.read("switchyard_redis_up")).toBe(1);
      // The scrape in progress is the only request in flight.
      expect(exposition.read("http_server_active_requests", { http_route: "/metrics" })).toBe(1);
    }
  });

  it("moves by exactly the scripted requests", async () => {
    const limited = await createUser(gateway, { keyOptions: { rpm: 1 } });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
    const before = await scrape(gateway);

    const chat = (model: string, content: string) =>
      client.chat.completions.create({ model, messages: [{ role: "user", content }] });
    const openai = await chat("gpt-4o-mini", "Hello there");
    const deepseek = await chat("deepseek-chat", "Hello there");
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Stream to me" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) streamUsage = chunk.usage ?? streamUsage;
    const embedding = await client.embeddings.create({
      model: "text-embedding-v4",
      input: ["one", "two"],
    });
    // An upstream failure: the sandbox answers 503, the gateway 502.
    await expect(chat("deepseek-chat", "Hello [[sandbox:status=503]]")).rejects.toMatchObject({
      status: 502,
    });
    // A quota refusal: the key's second request within the minute.
    const limitedClient = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: limited.key,
      maxRetries: 0,
    });
    const admitted = await limitedClient.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "once" }],
    });
    await expect(
      limitedClient.chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "twice" }],
      }),
    ).rejects.toMatchObject({ status: 429 });
    // A key that does not exist.
    const stranger = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: "sk-not-a-key-at-all",
      maxRetries: 0,
    });
    await expect(
      stranger.chat.completions.create({ model: "gpt-4o-mini", messages: [] }),
    ).rejects.toMatchObject({ status: 401 });

    // The counters move when each response closes: wait for the last one.
    let after = await scrape(gateway);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      after.read(name, labels) - before.read(name, labels);
    for (let i = 0; i < 50 && delta("switchyard_requests_total") < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape(gateway);
    }

    // Requests by endpoint, model, status and stream.
    const requests = (endpoint: string, model: string, status: number, streamed = false) =>
      delta("switchyard_requests_total", {
        endpoint,
        model,
        status_code: String(status),
        stream: String(streamed),
      });
    expect(delta("switchyard_requests_total")).toBe(8);
    expect(requests(CHAT, "gpt-4o-mini", 200)).toBe(2);
    expect(requests(CHAT, "gpt-4o-mini", 200, true)).toBe(1);
    expect(requests(CHAT, "deepseek-chat", 200)).toBe(1);
    expect(requests(CHAT, "deepseek-chat", 502)).toBe(1);
    expect(requests(EMBEDDINGS, "text-embedding-v4", 200)).toBe(1);
    expect(requests(CHAT, "gpt-4o-mini", 429)).toBe(1);
    expect(requests(CHAT, "unknown", 401)).toBe(1);

    // The HTTP histogram counts the same requests by route and status.
    const http = (route: string, status: number) =>
      delta("http_server_request_duration_seconds_count", {
        http_request_method: "POST",
        http_route: route,
        http_response_status_code: String(status),
      });
    expect(http(CHAT, 200)).toBe(4);
    expect(http(EMBEDDINGS, 200)).toBe(1);
    expect(http(CHAT, 502)).toBe(1);
    expect(http(CHAT, 429)).toBe(1);
    expect(http(CHAT, 401)).toBe(1);
    const errors = (code: string) =>
      delta("switchyard_request_errors_total", { endpoint: CHAT, error_type: code });
    expect([errors("upstream_error"), errors("rate_limited"), errors("invalid_api_key")]).toEqual([
      1, 1, 1,
    ]);

    // Upstream attempts and failures by vendor.
    const attempts = (vendor: string, model: string, outcome: string) =>
      delta("switchyard_upstream_attempts_total", { vendor, model, outcome });
    expect(delta("switchyard_upstream_attempts_total")).toBe(6);
    expect(attempts("openai", "gpt-4o-mini", "ok")).toBe(3);
    expect(attempts("deepseek", "deepseek-chat", "ok")).toBe(1);
    expect(attempts("deepseek", "deepseek-chat", "server_error")).toBe(1);
    expect(attempts("dashscope-compatible", "text-embedding-v4", "ok")).toBe(1);
    expect(delta("switchyard_upstream_attempts_total", { outcome: "server_error" })).toBe(1);
    expect(
      delta("switchyard_upstream_attempt_duration_seconds_count", {
        vendor: "deepseek",
        outcome: "server_error",
      }),
    ).toBe(1);

    // Tokens and cost: what the responses said, and what the usage records say.
    const records: UsageRow[] = [];
    for (const key of [user.key, limited.key]) {
      const listed = (await (
        await gateway.request("/v1/account/usage?limit=1000", { key })
      ).json()) as { data: UsageRow[] };
      records.push(...listed.data);
    }
    expect(records.filter((record) => record.status === "succeeded")).toHaveLength(5);
    const served = [
      { model: "gpt-4o-mini", vendor: "openai" },
      { model: "deepseek-chat", vendor: "deepseek" },
      { model: "text-embedding-v4", vendor: "dashscope-compatible" },
    ];
    for (const { model, vendor } of served) {
      const mine = records.filter((record) => record.model === model);
      const sum = (field: "input_tokens" | "output_tokens" | "cost_micros") =>
        mine.reduce((total, record) => total + record[field], 0);
      const tokens = (type: string) => delta("switchyard_tokens_total", { model, vendor, type });
      expect(tokens("input"), `${model} input`).toBe(sum("input_tokens"));
      expect(tokens("output"), `${model} output`).toBe(sum("output_tokens"));
      const usd = delta("switchyard_charged_usd_total", { model, vendor });
      expect(Math.round(usd * 1_000_000), `${model} cost`).toBe(sum("cost_micros"));
      expect(sum("cost_micros")).toBeGreaterThan(0);
    }
    const costOf = (usage: unknown) => (usage as { cost_micros: number }).cost_micros;
    const gptUsages = [openai.usage, streamUsage, admitted.usage];
    expect(delta("switchyard_tokens_total", { model: "gpt-4o-mini", type: "input" })).toBe(
      gptUsages.reduce((total, usage) => total + usage!.prompt_tokens, 0),
    );
    expect(
      Math.round(delta("switchyard_charged_usd_total", { model: "gpt-4o-mini" }) * 1_000_000),
    ).toBe(gptUsages.reduce((total, usage) => total + costOf(usage), 0));
    expect(delta("switchyard_tokens_total", { model: "deepseek-chat", type: "output" })).toBe(
      deepseek.usage!.completion_tokens,
    );
    expect(delta("switchyard_tokens_total", { model: "text-embedding-v4", type: "input" })).toBe(
      embedding.usage.prompt_tokens,
    );

    // Time to first byte: the one stream.
    expect(
      delta("switchyard_time_to_first_byte_seconds_count", {
        endpoint: CHAT,
        model: "gpt-4o-mini",
      }),
    ).toBe(1);
    expect(delta("switchyard_time_to_first_byte_seconds_count")).toBe(1);

    // Refusals, and nothing left in flight or held.
    expect(delta("switchyard_quota_rejections_total", { kind: "rpm" })).toBe(1);
    expect(delta("switchyard_quota_rejections_total")).toBe(1);
    expect(after.read("switchyard_billing_holds_open")).toBe(0);
    expect(after.read("switchyard_billing_held_usd")).toBe(0);
    expect(after.read("http_server_active_requests", { http_route: CHAT })).toBe(0);
  });

  it("labels an unknown path as unmatched, never with the raw path", async () => {
    const before = await scrape(gateway);
    expect((await gateway.request("/actuator/metrics-9f3a")).status).toBe(404);
    const after = await scrape(gateway);
    const count = (exposition: Exposition) =>
      exposition.read("http_server_request_duration_seconds_count", {
        http_route: "unmatched",
        http_response_status_code: "404",
      });
    expect(count(after) - count(before)).toBe(1);
    const text = await (await gateway.request("/metrics", { key: TOKEN })).text();
    expect(text).not.toContain("9f3a");
    expect(text).not.toContain(user.accountId);
    expect(text).not.toContain(user.keyId);
  });
});

describe("metrics per gateway, a token-free listener, and switching metrics off", () => {
  it("keeps each gateway's numbers apart and serves them on metrics.listen without a token", async () => {
    const lines: string[] = [];
    const listening = await startTestGateway({
      config: { metrics: { listen: "127.0.0.1:0" } },
      print: (line) => lines.push(line),
    });
    const other = await startTestGateway();
    try {
      const url = /metrics \(no token\) on (\S+)/.exec(lines.join("\n"))?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const read = async () => {
        const response = await fetch(url!);
        expect(response.status).toBe(200);
        return parseExposition(await response.text());
      };
      const before = await read();
      const answer = await other.request("/v1/chat/completions", {
        key: other.adminKey,
        json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      });
      expect(answer.status).toBe(200);
      // The other gateway's request is not this one's.
      expect((await read()).read("switchyard_requests_total")).toBe(
        before.read("switchyard_requests_total"),
      );
      // The listener serves /metrics only; the main port still wants a token or an admin key.
      expect((await fetch(url!.replace("/metrics", "/v1/models"))).status).toBe(404);
      expect((await listening.request("/metrics")).status).toBe(401);
    } finally {
      await Promise.all([listening.close(), other.close()]);
    }
  });

  it("serves no /metrics with metrics.enabled: false", async () => {
    const gateway = await startTestGateway({ config: { metrics: { enabled: false } } });
    try {
      expect((await gateway.request("/metrics", { key: gateway.adminKey })).status).toBe(404);
      expect(gateway.services.metrics).toBeUndefined();
    } finally {
      await gateway.close();
    }
  });
});

describe("video task and webhook metrics", () => {
  it("count a finished task, its billed seconds and charge, and each webhook attempt", async () => {
    const gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 200 },
      },
    });
    const answers = [500];
    const receiver = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.statusCode = answers.shift() ?? 200;
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const { port } = receiver.address() as AddressInfo;
    try {
      const user = await createUser(gateway);
      const before = await scrape(gateway, gateway.adminKey);
      const submitted = await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: {
          model: "gen-video",
          prompt: "waves [[sandbox:video-seconds=0.2]]",
          duration: 2,
          webhook_url: `http://127.0.0.1:${port}/hook`,
        },
      });
      expect(submitted.status).toBe(202);
      const { id } = (await submitted.json()) as { id: string };
      const deadline = Date.now() + 15_000;
      for (;;) {
        const task = (await (
          await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
        ).json()) as { webhook: { state: string } };
        if (task.webhook.state === "delivered") break;
        if (Date.now() > deadline) throw new Error(`task ${id} not delivered in time`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const after = await scrape(gateway, gateway.adminKey);
      const delta = (name: string, labels: Record<string, string> = {}) =>
        after.read(name, labels) - before.read(name, labels);
      const labels = { model: "gen-video", vendor: "xai-video" };
      const records = (
        (await (await gateway.request("/v1/account/usage", { key: user.key })).json()) as {
          data: Array<{ request_id: string; video_seconds: number; cost_micros: number }>;
        }
      ).data.filter((record) => record.request_id === id);
      expect(records).toHaveLength(1);
      expect(records[0]!.cost_micros).toBeGreaterThan(0);

      expect(
        delta("switchyard_requests_total", {
          endpoint: "/v1/videos/generations",
          model: "gen-video",
          status_code: "202",
        }),
      ).toBe(1);
      expect(delta("switchyard_upstream_attempts_total", { ...labels, outcome: "ok" })).toBe(1);
      expect(delta("switchyard_video_tasks_finished_total", { status: "succeeded" })).toBe(1);
      expect(delta("switchyard_video_tasks_finished_total")).toBe(1);
      expect(delta("switchyard_video_seconds_total", labels)).toBe(records[0]!.video_seconds);
      expect(Math.round(delta("switchyard_charged_usd_total", labels) * 1_000_000)).toBe(
        records[0]!.cost_micros,
      );
      expect(delta("switchyard_webhook_attempts_total", { outcome: "failed" })).toBe(1);
      expect(delta("switchyard_webhook_attempts_total", { outcome: "delivered" })).toBe(1);
      expect(delta("switchyard_webhook_attempts_total", { outcome: "gave_up" })).toBe(0);
      expect(after.read("switchyard_video_tasks", { state: "queued" })).toBe(0);
      expect(after.read("switchyard_video_tasks", { state: "running" })).toBe(0);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await gateway.close();
    }
  });
});
