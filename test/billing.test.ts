import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { sandboxStats, waitFor } from "./support/sandbox-stats.ts";

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 200,
  messages: [{ role: "user", content }],
  ...extra,
});

interface UsageRow {
  request_id: string;
  status: string;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  cost_micros: number;
  held_micros: number;
  overrun_micros: number;
  output_cap_lowered_to: number | null;
  usage_source: string;
  breakdown: Record<string, number>;
}

describe("billing through the pipeline", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  async function balance(key: string) {
    const response = await gateway.request("/v1/account/balance", { key });
    return (await response.json()) as {
      balance_micros: number;
      held_micros: number;
      available_micros: number;
    };
  }

  async function usageOf(key: string, requestId: string): Promise<UsageRow | undefined> {
    const response = await gateway.request("/v1/account/usage?limit=1000", { key });
    const { data } = (await response.json()) as { data: UsageRow[] };
    return data.find((row) => row.request_id === requestId);
  }

  it("charges the settled cost, reports it in a header, and writes one usage record", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("bill me"),
    });
    expect(response.status).toBe(200);
    const cost = Number(response.headers.get("x-switchyard-cost-micros"));
    const body = (await response.json()) as {
      usage: { prompt_tokens: number; completion_tokens: number; cost_micros: number };
    };
    // gpt-4o-mini: 150000 input and 600000 output micro-USD per 1M tokens, items rounded up.
    const expected =
      Math.ceil((body.usage.prompt_tokens * 150_000) / 1e6) +
      Math.ceil((body.usage.completion_tokens * 600_000) / 1e6);
    expect(cost).toBe(expected);
    expect(body.usage.cost_micros).toBe(cost);
    expect(await balance(user.key)).toEqual({
      object: "balance",
      balance_micros: 5_000_000 - cost,
      held_micros: 0,
      available_micros: 5_000_000 - cost,
      currency: "USD",
    });
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    expect(record).toMatchObject({
      status: "succeeded",
      cost_micros: cost,
      usage_source: "upstream",
      output_tokens: body.usage.completion_tokens,
    });
  });

  it("refuses with 402 (message only) and sends nothing upstream when the balance cannot cover the hold", async () => {
    const user = await createUser(gateway, { balanceMicros: 10 });
    const before = await sandboxStats(gateway.sandboxUrl);
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("too poor"),
    });
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body)).toEqual(["error"]);
    expect(Object.keys(body.error)).toEqual(["message"]);
    expect(body.error.message).toMatch(/Insufficient balance/);
    expect((await sandboxStats(gateway.sandboxUrl)).requests).toBe(before.requests);
    expect((await balance(user.key)).balance_micros).toBe(10);
  });

  it("holds no overdraft under 200 concurrent requests against a balance that covers 50", async () => {
    // Every request is identical and slow upstream (long enough for a loaded machine to send
    // all of them first), so all 200 are in flight together.
    const body = chat("[[sandbox:delay=2000]] concurrent", { max_tokens: 24 });
    const probe = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: body,
    });
    const cost = Number(probe.headers.get("x-switchyard-cost-micros"));
    expect(cost).toBeGreaterThan(0);
    const initial = cost * 50 + Math.floor(cost / 2);
    const user = await createUser(gateway, { balanceMicros: initial });
    const before = await sandboxStats(gateway.sandboxUrl);
    const responses = await Promise.all(
      Array.from({ length: 200 }, () =>
        gateway.request("/v1/chat/completions", { key: user.key, json: body }),
      ),
    );
    const ok = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status === 402);
    expect(ok.length + refused.length).toBe(200);
    // All 200 are in flight together, so exactly as many pass as holds fit in the balance.
    const quote = await gateway.request("/v1/billing/quote", { key: user.key, json: body });
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    expect(ok.length).toBe(Math.floor(initial / hold));
    expect(ok.length).toBeLessThanOrEqual(50);
    expect(ok.length).toBeGreaterThan(10);
    for (const response of refused) {
      expect(await response.json()).toEqual({
        error: { message: expect.stringMatching(/^Insufficient balance/) },
      });
    }
    const after = await balance(user.key);
    expect(after.balance_micros).toBeGreaterThanOrEqual(0);
    expect(after.held_micros).toBe(0);
    const charged = (await Promise.all(ok.map((response) => response.json()))) as Array<{
      usage: { cost_micros: number };
    }>;
    expect(initial - after.balance_micros).toBe(
      charged.reduce((sum, item) => sum + item.usage.cost_micros, 0),
    );
    expect((await sandboxStats(gateway.sandboxUrl)).requests - before.requests).toBe(ok.length);
    expect(await gateway.services.store.verify()).toMatchObject({ problems: [] });
  });

  it("charges nothing for an upstream failure before any output, and bills what a broken stream delivered", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const failed = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:status=500]]"),
    });
    expect(failed.status).toBe(502);
    const cutEarly = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:drop=1]] break before any text", { stream: true }),
    });
    expect(await cutEarly.text()).not.toContain("[DONE]");
    const early = await waitFor(
      () => usageOf(user.key, cutEarly.headers.get("x-request-id") ?? ""),
      (row) => row !== undefined,
    );
    expect(early).toMatchObject({ status: "failed", cost_micros: 0 });
    expect(await usageOf(user.key, failed.headers.get("x-request-id") ?? "")).toMatchObject({
      status: "failed",
      cost_micros: 0,
    });
    expect(await balance(user.key)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });

    const dropped = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:words=200;drop=12;chunk-delay=20]] break mid-stream", { stream: true }),
    });
    expect(dropped.status).toBe(200);
    const text = await dropped.text();
    expect(text).toContain('"error"');
    expect(text).not.toContain("[DONE]");
    const found = await waitFor(
      () => usageOf(user.key, dropped.headers.get("x-request-id") ?? ""),
      (row) => row !== undefined,
    );
    if (!found) throw new Error("no usage record for the broken stream");
    const record = found;
    // Every delivered unit is billed: the text that reached the client before the break.
    expect(record).toMatchObject({ status: "interrupted" });
    expect(record.output_tokens).toBeGreaterThan(0);
    expect(record.output_tokens).toBeLessThan(150);
    expect(record.cost_micros).toBeGreaterThan(0);
    expect(record.cost_micros).toBeLessThanOrEqual(record.held_micros);
    expect(await balance(user.key)).toMatchObject({
      balance_micros: 1_000_000 - record.cost_micros,
      held_micros: 0,
    });
  });

  it("charges an aborted stream for what the upstream produced before the abort, and aborts the upstream call", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const full = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:words=90]] long answer"),
    });
    const fullBody = (await full.json()) as {
      usage: { completion_tokens: number; cost_micros: number };
    };
    expect(fullBody.usage.completion_tokens).toBe(90);

    const before = await sandboxStats(gateway.sandboxUrl);
    const controller = new AbortController();
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat("[[sandbox:words=90;chunk-delay=60]] long answer", { stream: true }),
      signal: controller.signal,
    });
    const requestId = response.headers.get("x-request-id") ?? "";
    const reader = response.body!.getReader();
    let received = "";
    while ((received.match(/"content":"[^"]+"/g) ?? []).length < 4) {
      const { value } = await reader.read();
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    const record = await waitFor(
      () => usageOf(user.key, requestId),
      (row) => row !== undefined,
    );
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThan(0);
    expect(record?.output_tokens).toBeLessThan(90);
    expect(record?.cost_micros).toBeGreaterThan(0);
    expect(record?.cost_micros).toBeLessThan(fullBody.usage.cost_micros);
    const after = await waitFor(
      () => sandboxStats(gateway.sandboxUrl),
      (stats) => stats.aborted > before.aborted,
    );
    expect(after.aborted).toBe(before.aborted + 1);
    expect(await balance(user.key)).toMatchObject({ held_micros: 0 });
  });

  it("prices prompt-cache reads and writes at their own prices, once", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const prompt =
      "[[sandbox:cached-tokens=6;cache-write-tokens=2]] one two three four five six seven eight nine ten";
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: chat(prompt, { model: "gpt-4o" }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      usage: {
        prompt_tokens: number;
        completion_tokens: number;
        prompt_tokens_details: { cached_tokens: number };
      };
    };
    expect(body.usage.prompt_tokens_details.cached_tokens).toBe(6);
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    expect(record).toMatchObject({
      input_tokens: body.usage.prompt_tokens,
      cached_input_tokens: 6,
      cache_write_tokens: 2,
    });
    const model = (await (
      await gateway.request("/v1/models/gpt-4o", { key: user.key })
    ).json()) as {
      pricing: {
        per_1m_tokens: {
          input: number;
          output: number;
          cached_input: number;
          cache_write?: number;
        };
      };
    };
    const prices = model.pricing.per_1m_tokens;
    const fresh = body.usage.prompt_tokens - 6 - 2;
    const expected =
      Math.ceil((fresh * prices.input) / 1e6) +
      Math.ceil((6 * prices.cached_input) / 1e6) +
      Math.ceil((2 * (prices.cache_write ?? prices.input)) / 1e6) +
      Math.ceil((body.usage.completion_tokens * prices.output) / 1e6);
    expect(record?.cost_micros).toBe(expected);
    expect(Object.keys(record?.breakdown ?? {}).sort()).toEqual([
      "cache_write",
      "cached_input",
      "input",
      "output",
    ]);
  });

  it("counts usage itself when the upstream reports none, and marks it estimated", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    for (const stream of [false, true]) {
      const response = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: chat("[[sandbox:no-usage;words=30]] count it yourself", { stream }),
      });
      expect(response.status).toBe(200);
      await response.text();
      const record = await waitFor(
        () => usageOf(user.key, response.headers.get("x-request-id") ?? ""),
        (row) => row !== undefined,
      );
      expect(record).toMatchObject({ status: "succeeded", usage_source: "estimated" });
      expect(record?.input_tokens).toBeGreaterThan(5);
      // 30 sandbox words are at least 30 tokens by the tokenizer's count.
      expect(record?.output_tokens).toBeGreaterThanOrEqual(30);
      expect(record?.cost_micros).toBeGreaterThan(0);
    }
  });

  it("quotes the hold of a request with its line items, without running it", async () => {
    const before = await sandboxStats(gateway.sandboxUrl);
    const response = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: chat("how much?", { max_tokens: 1000 }),
    });
    expect(response.status).toBe(200);
    const quote = (await response.json()) as {
      max_cost_micros: number;
      line_items: Array<{ item: string; units: number; cost_micros: number }>;
      endpoint: string;
    };
    expect(quote.endpoint).toBe("/v1/chat/completions");
    const output = quote.line_items.find((item) => item.item === "output");
    expect(output).toEqual({
      item: "output",
      units: 1000,
      unit_price_micros: 600_000,
      per_units: 1_000_000,
      cost_micros: 600,
    });
    expect(quote.max_cost_micros).toBe(
      quote.line_items.reduce((sum, item) => sum + item.cost_micros, 0),
    );
    expect((await sandboxStats(gateway.sandboxUrl)).requests).toBe(before.requests);
    const invalid = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: chat("x", { temperature: 5 }),
    });
    expect(invalid.status).toBe(400);
  });

  it("groups usage by model and by day", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    for (const model of ["gpt-4o-mini", "gpt-4o-mini", "gpt-4o"]) {
      expect(
        (
          await gateway.request("/v1/chat/completions", {
            key: user.key,
            json: chat("group", { model }),
          })
        ).status,
      ).toBe(200);
    }
    const byModel = (await (
      await gateway.request("/v1/account/usage?group_by=model", { key: user.key })
    ).json()) as {
      data: Array<{ model: string; requests: number; cost_micros: number }>;
    };
    expect(byModel.data.map((row) => [row.model, row.requests])).toEqual([
      ["gpt-4o", 1],
      ["gpt-4o-mini", 2],
    ]);
    const byDay = (await (
      await gateway.request("/v1/account/usage?group_by=day", { key: user.key })
    ).json()) as {
      data: Array<{ day: string; requests: number }>;
    };
    expect(byDay.data).toEqual([
      expect.objectContaining({ day: new Date().toISOString().slice(0, 10), requests: 3 }),
    ]);
    const filtered = (await (
      await gateway.request("/v1/account/usage?model=gpt-4o", { key: user.key })
    ).json()) as { data: unknown[] };
    expect(filtered.data).toHaveLength(1);
  });
});
