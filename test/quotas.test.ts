import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QuotaSnapshot } from "../src/limits/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { waitFor } from "./support/sandbox-stats.ts";

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 50,
  messages: [{ role: "user", content }],
  ...extra,
});

async function expectThrottled(response: Response) {
  expect(response.status).toBe(429);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toEqual({
    code: "Throttling.RateQuota",
    message: expect.any(String),
    request_id: response.headers.get("x-request-id"),
    error: { message: body.message, type: "rate_limit_error", code: "Throttling.RateQuota" },
  });
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

describe("rate and concurrency quotas", () => {
  let gateway: TestGateway;
  // In memory a number, in Redis (the PostgreSQL + Redis pass) a promise of one.
  const inFlight = async (keyId: string) =>
    await (gateway.services.quotas as unknown as QuotaSnapshot).inFlight(keyId);

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        upstream: { connect_timeout_ms: 1000, first_byte_timeout_ms: 150, idle_timeout_ms: 150 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("lets exactly the configured requests per minute pass, then answers 429 with the documented body and headers", async () => {
    const user = await createUser(gateway, { keyOptions: { rpm: 5 } });
    const responses = [];
    for (let i = 0; i < 7; i++)
      responses.push(
        await gateway.request("/v1/chat/completions", { key: user.key, json: chat("rpm") }),
      );
    expect(responses.map((response) => response.status)).toEqual([
      200, 200, 200, 200, 200, 429, 429,
    ]);
    expect(
      responses
        .slice(0, 5)
        .map((response) => response.headers.get("x-ratelimit-remaining-requests")),
    ).toEqual(["4", "3", "2", "1", "0"]);
    for (const response of responses.slice(0, 5)) {
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("5");
      expect(response.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+s$/);
    }
    await expectThrottled(responses[5]!);
    expect(responses[6]!.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  });

  it("counts settled tokens against tpm and refuses once the minute's tokens reach it", async () => {
    const user = await createUser(gateway, { keyOptions: { tpm: 20 } });
    const first = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("tpm"),
    });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("20");
    expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe("20");
    const used = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    expect(used).toBeGreaterThanOrEqual(20);
    const second = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("tpm"),
    });
    await expectThrottled(second);
    expect(second.headers.get("x-ratelimit-limit-tokens")).toBe("20");
    expect(second.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(50);
  });

  it("lets exactly the configured concurrent requests run", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 3 } });
    // The key's lookup is cached first, so the ten requests reach the limiter together.
    expect((await gateway.request("/v1/models", { key: user.key })).status).toBe(200);
    // Streams of about a second (a word every 40 ms): the three admitted ones hold their slots
    // until all ten have reached the limiter, however slowly a loaded machine sends them.
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        gateway.request("/v1/chat/completions", {
          key: user.key,
          json: chat("[[sandbox:chunk-delay=40;words=25]] slow", { stream: true }),
        }),
      ),
    );
    const admitted = responses.filter((response) => response.status === 200);
    expect(admitted).toHaveLength(3);
    const throttled = responses.filter((response) => response.status === 429);
    expect(throttled).toHaveLength(7);
    for (const response of throttled) await expectThrottled(response);
    for (const response of admitted) expect(await response.text()).toContain("[DONE]");
    await waitFor(
      async () => inFlight(user.keyId),
      (count) => count === 0,
    );
  });

  it("keeps a streaming request's slot until its stream ends", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 1 } });
    const stream = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:chunk-delay=40;words=15]] stream", { stream: true }),
    });
    expect(stream.status).toBe(200);
    const blocked = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("blocked"),
    });
    await expectThrottled(blocked);
    expect(await stream.text()).toContain("[DONE]");
    await waitFor(
      async () => inFlight(user.keyId),
      (count) => count === 0,
    );
    expect(
      (await gateway.request("/v1/chat/completions", { key: user.key, json: chat("free again") }))
        .status,
    ).toBe(200);
  });

  it("returns the concurrency count to zero after 10,000 requests with random aborts and upstream timeouts", async () => {
    const user = await createUser(gateway, {
      balanceMicros: 1_000_000_000,
      keyOptions: { concurrency: 40 },
    });
    const statuses = new Map<string, number>();
    const count = (label: string) => statuses.set(label, (statuses.get(label) ?? 0) + 1);
    let next = 0;
    const total = 10_000;
    async function worker() {
      while (next < total) {
        const i = next++;
        const kind = i % 10;
        const controller = new AbortController();
        // 1 in 10 times out upstream (the gateway waits 150 ms for the first byte); 1 in 10 is
        // aborted by the client mid-stream; 1 in 10 is aborted before the answer.
        const content =
          kind === 0
            ? "[[sandbox:delay=400]] timeout"
            : kind === 1
              ? "[[sandbox:chunk-delay=5]] stream"
              : "quick";
        if (kind === 2) setTimeout(() => controller.abort(), Math.random() * 3);
        try {
          const response = await gateway.request("/v1/chat/completions", {
            key: user.key,
            json: chat(content, kind === 1 ? { stream: true } : {}),
            signal: controller.signal,
          });
          if (kind === 1 && response.status === 200) {
            const reader = response.body!.getReader();
            await reader.read();
            controller.abort();
            count("aborted-stream");
          } else {
            await response.arrayBuffer();
            count(String(response.status));
          }
        } catch {
          count("aborted");
        }
      }
    }
    await Promise.all(Array.from({ length: 48 }, worker));
    const seen = Object.fromEntries(statuses);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(total);
    expect(seen).toMatchObject({
      "504": expect.any(Number),
      "aborted-stream": expect.any(Number),
      "200": expect.any(Number),
    });
    const settled = await waitFor(
      async () => inFlight(user.keyId),
      (value) => value === 0,
      10_000,
    );
    expect(settled).toBe(0);
    const balance = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as { held_micros: number };
    expect(
      await waitFor(
        async () => balance.held_micros,
        (held) => held === 0,
      ),
    ).toBe(0);
    expect(await gateway.services.store.verify()).toMatchObject({ problems: [] });
  }, 180_000);
});
