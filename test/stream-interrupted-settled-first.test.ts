/**
 * A stream the upstream breaks mid-way ends with an error frame, and what it delivered is
 * charged (`interrupted`). The charge is written before that frame goes out, as a whole
 * answer's is before its last frame: a client that reads the error and asks for its usage at
 * once finds the charge there. Settlements are slowed on purpose so a charge written after the
 * ending would be missed.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const PROMPT = "Tell me a long story about the sea. [[sandbox:drop=6;chunk-delay=25]]";
/** Anthropic's mid-stream `event: error` (overloaded) in place of the sixth frame. */
const OVERLOADED =
  "Tell me a long story about the sea. [[sandbox:status=529;malformed=6;chunk-delay=25]]";
const BALANCE = 50_000_000;

describe("a stream the upstream broke is charged before its error frame", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
    const store = gateway.services.store;
    const settle = store.settle.bind(store);
    vi.spyOn(store, "settle").mockImplementation(async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return settle(...args);
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await gateway.close();
  });

  /** Runs `read` (which must raise the stream's error) and reads the usage right after. */
  async function chargedAtOnce(
    key: string,
    read: () => Promise<string>,
  ): Promise<{ text: string; status?: string; balance: number }> {
    let text = "";
    const error = await read().then(
      (whole) => {
        text = whole;
        return undefined;
      },
      (failure: unknown) => failure,
    );
    expect(error, "the broken stream was taken for a whole one").toBeDefined();
    const usage = (await (await gateway.request("/v1/account/usage?limit=1", { key })).json()) as {
      data: Array<{ status: string }>;
    };
    const balance = (await (await gateway.request("/v1/account/balance", { key })).json()) as {
      balance_micros: number;
    };
    return { text, status: usage.data[0]?.status, balance: balance.balance_micros };
  }

  it.each([
    ["relayed", "gpt-4o-mini"],
    ["translated", "claude-3-5-haiku-20241022"],
  ])("chat %s", async (_, model) => {
    const { key } = await createUser(gateway, { balanceMicros: BALANCE });
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    let text = "";
    const outcome = await chargedAtOnce(key, async () => {
      const stream = await client.chat.completions.create({
        model,
        stream: true,
        messages: [{ role: "user", content: PROMPT }],
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      return text;
    });
    expect(text.length).toBeGreaterThan(0);
    expect(outcome.status).toBe("interrupted");
    expect(outcome.balance).toBeLessThan(BALANCE);
  });

  it.each([
    ["relayed", "claude-3-5-haiku-20241022", PROMPT],
    ["relayed, the vendor's own error event", "claude-3-5-haiku-20241022", OVERLOADED],
    ["translated", "gpt-4o-mini", PROMPT],
  ])("messages %s", async (_, model, prompt) => {
    const { key } = await createUser(gateway, { balanceMicros: BALANCE });
    const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    let text = "";
    const outcome = await chargedAtOnce(key, async () => {
      const stream = await client.messages.create({
        model,
        stream: true,
        max_tokens: 500,
        messages: [{ role: "user", content: prompt }],
      });
      for await (const event of stream)
        if (event.type === "content_block_delta" && event.delta.type === "text_delta")
          text += event.delta.text;
      return text;
    });
    expect(text.length).toBeGreaterThan(0);
    expect(outcome.status).toBe("interrupted");
    expect(outcome.balance).toBeLessThan(BALANCE);
  });

  it.each([
    ["relayed", "gpt-4o-mini"],
    ["translated", "claude-3-5-haiku-20241022"],
  ])("responses %s", async (_, model) => {
    const { key } = await createUser(gateway, { balanceMicros: BALANCE });
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    let text = "";
    const outcome = await chargedAtOnce(key, async () => {
      const stream = await client.responses.create({ model, stream: true, input: PROMPT });
      for await (const event of stream) {
        if (event.type === "response.output_text.delta") text += event.delta;
        if (event.type === "response.failed") throw new Error("response.failed");
      }
      return text;
    });
    expect(text.length).toBeGreaterThan(0);
    expect(outcome.status).toBe("interrupted");
    expect(outcome.balance).toBeLessThan(BALANCE);
  });
});
