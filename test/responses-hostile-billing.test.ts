/**
 * /v1/responses billed like the chat call it is equivalent to, against vendors that misbehave:
 * - a stream whose upstream reports no usage is billed its whole prompt as the gateway counts it
 *   (tool definitions included), as the same chat stream is;
 * - a native OpenAI route whose upstream answers `response.failed` (streamed, or a failed Response
 *   as JSON) delivered nothing, so it is charged nothing, whatever usage the failure carried.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";
import { gatewayOnFakeOpenAI } from "./support/vendor-models.ts";

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

const usageOf = (key: string, requestId: string) => usageRowOf(gateway, key, requestId);

const bigTool = {
  name: "lookup",
  description: Array.from({ length: 1500 }, (_, i) => `word${i}`).join(" "),
  parameters: { type: "object", properties: { q: { type: "string" } } },
};

describe("streamed responses whose upstream reports no usage", () => {
  it.each(["mistral-small-latest", "gpt-4o-mini"])(
    "bill the tool definitions as input, like the same chat stream (%s)",
    async (model) => {
      const payer = await createUser(gateway, { balanceMicros: 5_000_000 });
      const text = "[[sandbox:no-usage;words=5]] hi";
      const chat = await gateway.request("/v1/chat/completions", {
        key: payer.key,
        json: {
          model,
          stream: true,
          messages: [{ role: "user", content: text }],
          tools: [{ type: "function", function: bigTool }],
        },
      });
      expect(chat.status).toBe(200);
      await chat.text();
      const responses = await gateway.request("/v1/responses", {
        key: payer.key,
        json: {
          model,
          stream: true,
          input: text,
          tools: [{ type: "function", ...bigTool }],
        },
      });
      expect(responses.status).toBe(200);
      const events = await responses.text();
      expect(events).toContain("response.completed");
      const chatRow = await usageOf(payer.key, chat.headers.get("x-request-id") ?? "");
      const respRow = await usageOf(payer.key, responses.headers.get("x-request-id") ?? "");
      // The chat stream bills > 1500 input tokens (the tool definition); the responses stream
      // should bill the same prompt.
      expect(chatRow?.input_tokens).toBeGreaterThan(1500);
      expect({ model, responsesInputTokens: respRow?.input_tokens }).toEqual({
        model,
        responsesInputTokens: chatRow?.input_tokens,
      });
    },
  );
});

describe("a native (OpenAI Responses) route whose upstream answers response.failed", () => {
  let vendorGateway: TestGateway;
  let vendor: import("./support/fake-vendor.ts").FakeVendor;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ gateway: vendorGateway, vendor, close } = await gatewayOnFakeOpenAI());
  });
  afterAll(() => close());

  const failedResponse = {
    id: "resp_failed1",
    object: "response",
    status: "failed",
    error: { code: "server_error", message: "The model failed." },
    output: [],
    usage: { input_tokens: 2000, output_tokens: 0, total_tokens: 2000 },
  };

  it("streamed: nothing delivered, so nothing is charged", async () => {
    const payer = await createUser(vendorGateway, { balanceMicros: 1_000_000 });
    const sse = [
      `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { ...failedResponse, status: "in_progress", error: null, usage: null } })}\n\n`,
      `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", sequence_number: 1, response: failedResponse })}\n\n`,
    ].join("");
    vendor.answer({ headers: { "content-type": "text/event-stream" }, body: sse });
    const response = await vendorGateway.request("/v1/responses", {
      key: payer.key,
      json: { model: "rogue-gpt", stream: true, input: "hello" },
    });
    const text = await response.text();
    expect(text).toContain("response.failed");
    const row = await usageRowOf(
      vendorGateway,
      payer.key,
      response.headers.get("x-request-id") ?? "",
    );
    expect({ status: row?.status, cost_micros: row?.cost_micros }).toEqual({
      status: "failed",
      cost_micros: 0,
    });
  });

  it("non-streamed: a failed Response is not charged", async () => {
    const payer = await createUser(vendorGateway, { balanceMicros: 1_000_000 });
    vendor.answer({ body: failedResponse });
    const response = await vendorGateway.request("/v1/responses", {
      key: payer.key,
      json: { model: "rogue-gpt", input: "hello" },
    });
    const body = await response.text();
    const balance = (await (
      await vendorGateway.request("/v1/account/balance", { key: payer.key })
    ).json()) as { balance_micros: number };
    expect({
      status: response.status,
      cost: response.headers.get("x-switchyard-cost-micros"),
      balance: balance.balance_micros,
      body: body.slice(0, 120),
    }).toMatchObject({ balance: 1_000_000 });
  });
});
