/**
 * What `/v1/responses` charges: the same as `/v1/chat/completions` for the same request, on
 * every kind of route; a stream the upstream breaks or the client aborts is charged for what
 * was delivered (nothing when nothing was), as chat streams are.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { RESPONSES_ROUTES as ROUTES } from "./support/responses-routes.ts";
import { waitFor } from "./support/sandbox-stats.ts";

let gateway: TestGateway;
let user: { accountId: string; key: string };

beforeAll(async () => {
  gateway = await startTestGateway();
  user = await createUser(gateway);
});
afterAll(() => gateway.close());

describe("the same request through chat completions and responses", () => {
  it.each(ROUTES)("costs the same over the $name", async ({ model }) => {
    const chat = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: {
        model,
        messages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: "Compare the two paths" },
        ],
        max_tokens: 200,
      },
    });
    const responses = await gateway.request("/v1/responses", {
      key: user.key,
      json: {
        model,
        instructions: "Answer briefly.",
        input: "Compare the two paths",
        max_output_tokens: 200,
      },
    });
    expect(chat.status).toBe(200);
    expect(responses.status).toBe(200);
    const chatCost = Number(chat.headers.get("x-switchyard-cost-micros"));
    expect(chatCost).toBeGreaterThan(0);
    expect(Number(responses.headers.get("x-switchyard-cost-micros"))).toBe(chatCost);
    const chatBody = (await chat.json()) as { usage: { prompt_tokens: number } };
    const body = (await responses.json()) as { usage: { input_tokens: number } };
    expect(body.usage.input_tokens).toBe(chatBody.usage.prompt_tokens);
  });
});

describe("a stream the upstream breaks", () => {
  interface UsageRow {
    request_id: string;
    status: string;
    output_tokens: number;
    cost_micros: number;
    held_micros: number;
  }
  const usageOf = async (key: string, requestId: string) => {
    const response = await gateway.request("/v1/account/usage?limit=1000", { key });
    const { data } = (await response.json()) as { data: UsageRow[] };
    return data.find((row) => row.request_id === requestId);
  };

  it("ends with error and response.failed, and bills what was delivered, like chat", async () => {
    const payer = await createUser(gateway, { balanceMicros: 1_000_000 });
    const stream = (content: string) =>
      gateway.request("/v1/responses", {
        key: payer.key,
        json: { model: "gpt-4o-mini", stream: true, input: content },
      });
    const early = await stream("[[sandbox:drop=1]] break before any text");
    expect(await early.text()).toContain("event: response.failed");
    const none = await waitFor(
      () => usageOf(payer.key, early.headers.get("x-request-id") ?? ""),
      (row) => row !== undefined,
    );
    expect(none).toMatchObject({ status: "failed", cost_micros: 0 });

    const broken = await stream("[[sandbox:words=200;drop=12;chunk-delay=20]] break mid-stream");
    expect(broken.status).toBe(200);
    const events = (await broken.text())
      .split("\n\n")
      .filter((frame) => frame.startsWith("event:"))
      .map((frame) => frame.split("\n")[0]);
    expect(events.slice(-2)).toEqual(["event: error", "event: response.failed"]);
    expect(events).toContain("event: response.output_text.delta");
    expect(events).not.toContain("event: response.completed");
    const record = await waitFor(
      () => usageOf(payer.key, broken.headers.get("x-request-id") ?? ""),
      (row) => row !== undefined,
    );
    expect(record).toMatchObject({ status: "interrupted" });
    expect(record?.output_tokens).toBeGreaterThan(0);
    expect(record?.output_tokens).toBeLessThan(150);
    expect(record?.cost_micros).toBeGreaterThan(0);
    expect(record?.cost_micros).toBeLessThanOrEqual(record?.held_micros ?? 0);
    const balance = await gateway.request("/v1/account/balance", { key: payer.key });
    expect(await balance.json()).toMatchObject({
      balance_micros: 1_000_000 - (record?.cost_micros ?? 0),
      held_micros: 0,
    });
  });
});

describe.each(ROUTES.slice(0, 2))("a stream the client aborts, over the $name", ({ model }) => {
  it("is charged for what was delivered before the abort", async () => {
    const payer = await createUser(gateway, { balanceMicros: 1_000_000 });
    const controller = new AbortController();
    const response = await gateway.request("/v1/responses", {
      key: payer.key,
      json: { model, stream: true, input: "[[sandbox:words=90;chunk-delay=60]] long answer" },
      signal: controller.signal,
    });
    const requestId = response.headers.get("x-request-id") ?? "";
    const reader = response.body!.getReader();
    let received = "";
    while ((received.match(/event: response\.output_text\.delta/g) ?? []).length < 4) {
      const { value } = await reader.read();
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    const usage = async () => {
      const answer = await gateway.request("/v1/account/usage?limit=1000", { key: payer.key });
      const { data } = (await answer.json()) as {
        data: { request_id: string; status: string; output_tokens: number; cost_micros: number }[];
      };
      return data.find((row) => row.request_id === requestId);
    };
    const record = await waitFor(usage, (row) => row !== undefined);
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThan(0);
    expect(record?.output_tokens).toBeLessThan(90);
    expect(record?.cost_micros).toBeGreaterThan(0);
    const balance = await waitFor(
      async () =>
        (await (await gateway.request("/v1/account/balance", { key: payer.key })).json()) as {
          held_micros: number;
          balance_micros: number;
        },
      (value) => value.held_micros === 0,
    );
    expect(balance).toMatchObject({
      held_micros: 0,
      balance_micros: 1_000_000 - (record?.cost_micros ?? 0),
    });
  });
});
