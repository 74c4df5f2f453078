/**
 * A Messages stream translated from an OpenAI-compatible vendor, against a vendor that
 * misbehaves: what the client is shown and what it is charged must agree, and what it was never
 * sent is never charged.
 * - Parallel tool calls an upstream interleaves are held back until the open block closes; a
 *   stream that breaks meanwhile never sent the held call, and is not charged for it.
 * - Without the vendor's usage, `message_delta` shows the usage the request is charged (the
 *   gateway's own count), not a rough estimate.
 * - A tool call the vendor started without a name is a broken upstream answer, not a `tool_use`
 *   block named "" the client would try to run.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeVendor,
  fakeChatModel,
  openAIChunk,
  openAIFrames,
} from "./support/fake-vendor.ts";
import { type FakeVendorGateway, startFakeVendorGateway } from "./support/fake-vendor-gateway.ts";
import { createUser, type TestGateway } from "./support/gateway-harness.ts";

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  input_schema: { type: "object", properties: { city: { type: "string" } } },
};

const frames = openAIFrames;
const chunk = openAIChunk;
const call = (index: number, fields: Record<string, unknown>) =>
  chunk({ tool_calls: [{ index, ...fields }] });

interface UsageRow {
  status: string;
  output_tokens: number;
  input_tokens: number;
}

describe("Messages translated from an OpenAI-compatible vendor: shown and charged agree", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;

  let started: FakeVendorGateway | undefined;

  beforeAll(async () => {
    started = await startFakeVendorGateway((url) => [
      fakeChatModel({
        id: "fake-chat",
        baseUrl: `${url}/v1`,
        displayName: "An OpenAI-compatible vendor that misbehaves",
      }),
    ]);
    ({ gateway, vendor } = started);
  });
  afterAll(() => started?.close());

  async function user() {
    const { key } = await createUser(gateway, { balanceMicros: 50_000_000 });
    return { key, client: new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 }) };
  }

  async function lastUsage(key: string): Promise<UsageRow> {
    const response = await gateway.request("/v1/account/usage?limit=1", { key });
    const rows = (await response.json()) as { data: UsageRow[] };
    return rows.data[0]!;
  }

  it("does not charge a held-back parallel tool call the broken stream never sent", async () => {
    // Call 1 starts while call 0's block is open, so it waits; its long arguments arrive, then
    // the stream ends without a finish.
    const held = JSON.stringify({ city: "word ".repeat(3_000) });
    vendor.answer({
      headers: { "content-type": "text/event-stream" },
      body: frames([
        chunk({ role: "assistant", content: null }),
        call(0, {
          id: "call_a",
          type: "function",
          function: { name: "get_weather", arguments: "" },
        }),
        call(1, {
          id: "call_b",
          type: "function",
          function: { name: "get_weather", arguments: "" },
        }),
        call(0, { function: { arguments: '{"city":"Oslo"}' } }),
        call(1, { function: { arguments: held } }),
      ]),
    });
    const { key, client } = await user();
    const sent: string[] = [];
    const failure = await (async () => {
      const stream = await client.messages.create({
        model: "fake-chat",
        max_tokens: 4_000,
        stream: true,
        tools: [WEATHER],
        messages: [{ role: "user", content: "Weather in Oslo and Rome?" }],
      });
      for await (const event of stream)
        if (event.type === "content_block_delta" && event.delta.type === "input_json_delta")
          sent.push(event.delta.partial_json);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure, "the broken stream was taken for a whole one").toBeDefined();
    expect(sent.join("")).not.toContain("word");
    const row = await lastUsage(key);
    expect(row.status).toBe("interrupted");
    // What went out ('{"city":"Oslo"}' and the call's name) is a few tokens; the held call's
    // arguments are about 3,000.
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeLessThan(100);
  });

  it("shows in message_delta the usage it charges when the vendor reports none", async () => {
    vendor.answer({
      headers: { "content-type": "text/event-stream" },
      body: `${frames([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Tokenizers and characters over four rarely agree, " }),
        chunk({ content: "so the shown count must be the charged one: 12345 67890 !?" }),
        chunk({}, "stop"),
      ])}data: [DONE]\n\n`,
    });
    const { key, client } = await user();
    const stream = await client.messages.create({
      model: "fake-chat",
      max_tokens: 400,
      stream: true,
      messages: [{ role: "user", content: "Say something." }],
    });
    let shown: Anthropic.MessageDeltaUsage | undefined;
    for await (const event of stream) if (event.type === "message_delta") shown = event.usage;
    const row = await lastUsage(key);
    expect(row.status).toBe("succeeded");
    expect(shown?.output_tokens).toBe(row.output_tokens);
    expect(shown?.input_tokens).toBe(row.input_tokens);
  });

  it("ends with an error, not a tool_use named '', when the vendor starts a call without a name", async () => {
    vendor.answer({
      headers: { "content-type": "text/event-stream" },
      body: `${frames([
        chunk({ role: "assistant", content: null }),
        call(0, { id: "call_a", type: "function", function: { arguments: "" } }),
        call(0, { function: { arguments: '{"city":"Oslo"}' } }),
        chunk({}, "tool_calls"),
      ])}data: [DONE]\n\n`,
    });
    const { client } = await user();
    const names: string[] = [];
    const failure = await (async () => {
      const stream = await client.messages.create({
        model: "fake-chat",
        max_tokens: 400,
        stream: true,
        tools: [WEATHER],
        messages: [{ role: "user", content: "Weather in Oslo?" }],
      });
      for await (const event of stream)
        if (event.type === "content_block_start" && event.content_block.type === "tool_use")
          names.push(event.content_block.name);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(names).toEqual([]);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
  });

  it("answers 502, not a tool_use named '', when a whole answer has a call without a name", async () => {
    vendor.answer({
      body: {
        id: "chatcmpl-x",
        object: "chat.completion",
        created: 1,
        model: "fake-1",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "call_a", type: "function", function: { arguments: "{}" } }],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      },
    });
    const { key, client } = await user();
    const failure = await client.messages
      .create({
        model: "fake-chat",
        max_tokens: 400,
        tools: [WEATHER],
        messages: [{ role: "user", content: "Weather in Oslo?" }],
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((failure as InstanceType<typeof Anthropic.APIError>)?.status).toBe(502);
    expect((await lastUsage(key))?.status).not.toBe("succeeded");
  });
});
