/**
 * Protocol translation against what the real vendors require (interleaved parallel tool calls,
 * tool_choice none with tool history, stop sequences beyond OpenAI's 4, Gemini 3's signed
 * function calls), and the sandbox refusing what the vendors refuse. Each test asserts the real
 * protocol's behaviour and failed before its fix.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";
import {
  type FakeVendor,
  fakeChatModel,
  openAIChunk,
  openAIStream,
} from "./support/fake-vendor.ts";
import { type FakeVendorGateway, startFakeVendorGateway } from "./support/fake-vendor-gateway.ts";
import type { TestGateway } from "./support/gateway-harness.ts";

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const OA_WEATHER: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const sse = openAIStream;
const chunk = openAIChunk;

describe("translation through the gateway", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;
  let anthropic: Anthropic;
  let openai: OpenAI;

  let started: FakeVendorGateway | undefined;

  beforeAll(async () => {
    started = await startFakeVendorGateway((url) => [
      fakeChatModel({
        id: "fake-chat",
        baseUrl: `${url}/v1`,
        displayName: "An OpenAI-compatible server that interleaves parallel tool calls",
      }),
    ]);
    ({ gateway, vendor } = started);
    anthropic = new Anthropic({ baseURL: gateway.url, apiKey: gateway.adminKey, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.adminKey, maxRetries: 0 });
  });
  afterAll(() => started?.close());

  async function sandboxRequests(path: string) {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=50`);
    const log = (await response.json()) as {
      requests: Array<{ path: string; body: Record<string, unknown> }>;
    };
    return log.requests.filter((entry) => entry.path === path);
  }

  it("Messages stream: no content_block_delta after its block's content_block_stop (interleaved parallel tool calls)", async () => {
    vendor.answer({
      headers: { "content-type": "text/event-stream" },
      body: sse([
        chunk({ role: "assistant", content: null }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_a",
              type: "function",
              function: { name: "get_weather", arguments: "" },
            },
          ],
        }),
        chunk({
          tool_calls: [
            {
              index: 1,
              id: "call_b",
              type: "function",
              function: { name: "get_weather", arguments: "" },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"Rome"}' } }] }),
        chunk({}, "tool_calls"),
        {
          ...chunk({}),
          choices: [],
          usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
        },
      ]),
    });
    const stream = await anthropic.messages.create({
      model: "fake-chat",
      max_tokens: 100,
      stream: true,
      tools: [WEATHER],
      messages: [{ role: "user", content: "Weather in Oslo and Rome?" }],
    });
    const stopped = new Set<number>();
    const violations: string[] = [];
    const json = new Map<number, string>();
    for await (const event of stream) {
      if (event.type === "content_block_stop") stopped.add(event.index);
      if (event.type === "content_block_delta") {
        if (stopped.has(event.index)) violations.push(`delta for closed block ${event.index}`);
        if (event.delta.type === "input_json_delta")
          json.set(event.index, (json.get(event.index) ?? "") + event.delta.partial_json);
      }
    }
    // provider-protocols.md §10: message_start → (block_start → deltas → block_stop)* → ...
    expect(violations).toEqual([]);
    expect([...json.values()].map((text) => JSON.parse(text))).toEqual([
      { city: "Oslo" },
      { city: "Rome" },
    ]);
  });

  it("chat → Anthropic: tool_choice none with tool history still sends the tools (Anthropic refuses tool blocks without tools)", async () => {
    const completion = await openai.chat.completions.create({
      model: "claude-haiku-4-5",
      tools: [OA_WEATHER],
      tool_choice: "none",
      messages: [
        { role: "user", content: "Weather in Oslo? review-tool-choice-none" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "toolu_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "Snow" },
      ],
    });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const upstream = (await sandboxRequests("/anthropic/v1/messages"))
      .filter((entry) => JSON.stringify(entry.body).includes("review-tool-choice-none"))
      .at(-1);
    expect(upstream?.body.tools).toEqual([expect.objectContaining({ name: "get_weather" })]);
    expect(upstream?.body.tool_choice).toEqual({ type: "none" });
  });

  it("chat → Anthropic: tool history without tools is answered, as OpenAI answers it (Anthropic refuses tool blocks without tools)", async () => {
    // A client that replays a conversation with tool calls but offers no tools this turn (it
    // wants a plain answer): OpenAI answers; Anthropic refuses unless tools are defined. The
    // gateway defines the tools the history names, with tool_choice none.
    const completion = await openai.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [
        { role: "user", content: "Weather in Oslo? review-tools-from-history" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "toolu_2",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "toolu_2", content: "Snow" },
      ],
    });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(completion.choices[0]?.message.tool_calls ?? []).toEqual([]);
    const upstream = (await sandboxRequests("/anthropic/v1/messages"))
      .filter((entry) => JSON.stringify(entry.body).includes("review-tools-from-history"))
      .at(-1);
    expect(upstream?.body.tools).toEqual([expect.objectContaining({ name: "get_weather" })]);
    expect(upstream?.body.tool_choice).toEqual({ type: "none" });
  });

  it("Messages → OpenAI: more than 4 stop_sequences are refused, never sent to an OpenAI upstream (OpenAI allows at most 4)", async () => {
    const failure = await anthropic.messages
      .create({
        model: "gpt-4o-mini",
        max_tokens: 20,
        stop_sequences: ["s1", "s2", "s3", "s4", "s5"],
        messages: [{ role: "user", content: "review-five-stops" }],
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect((failure as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/stop_sequences/) },
    });
    const upstream = (await sandboxRequests("/openai/v1/chat/completions")).filter((entry) =>
      JSON.stringify(entry.body).includes("review-five-stops"),
    );
    expect(upstream).toHaveLength(0);
  });

  it("Messages → Gemini 3: a replayed functionCall part carries a thoughtSignature (Gemini 3 refuses one without)", async () => {
    const model = "gemini-3-flash-preview";
    const ask = "Weather in Oslo? review-gemini3-signature";
    const first = await anthropic.messages.create({
      model,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [{ role: "user", content: ask }],
    });
    const use = first.content.find((block) => block.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("expected a tool_use block");
    await anthropic.messages.create({
      model,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [
        { role: "user", content: ask },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "Snow" }] },
      ],
    });
    const upstream = (await sandboxRequests(`/gemini/v1beta/models/${model}:generateContent`)).at(
      -1,
    );
    const contents = upstream?.body.contents as Array<{
      role: string;
      parts: Array<Record<string, unknown>>;
    }>;
    const call = contents.flatMap((content) => content.parts).find((part) => part.functionCall);
    expect(call).toBeDefined();
    expect(call?.thoughtSignature).toEqual(expect.any(String));
  });
});

describe("sandbox strictness: requests the real vendors refuse", () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ host: "127.0.0.1", port: 0 });
  });
  afterAll(() => sandbox?.close());

  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${sandbox.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  const toolUseTurn = {
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }],
  };

  it.each([
    ["a user turn with empty string content", { messages: [{ role: "user", content: "" }] }],
    ["a user turn with no blocks", { messages: [{ role: "user", content: [] }] }],
    [
      "an empty text block",
      { messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
    ],
    [
      "a tool_result with no tool_use before it",
      {
        tools: [WEATHER],
        messages: [
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "r" }],
          },
        ],
      },
    ],
    [
      "a tool_use not answered by a tool_result in the next turn",
      {
        tools: [WEATHER],
        messages: [{ role: "user", content: "a" }, toolUseTurn, { role: "user", content: "b" }],
      },
    ],
    [
      "tool_use / tool_result blocks without tools",
      {
        messages: [
          { role: "user", content: "a" },
          toolUseTurn,
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "r" }],
          },
        ],
      },
    ],
  ])("Anthropic emulation refuses %s with a 400 invalid_request_error", async (_name, extra) => {
    const response = await post(
      "/anthropic/v1/messages",
      { "x-api-key": "sk-sandbox", "anthropic-version": "2023-06-01" },
      { model: "claude-haiku-4-5", max_tokens: 10, ...extra },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.any(String) },
    });
  });

  it.each([
    ["an unknown role", { messages: [{ role: "bogus", content: "x" }] }],
    ["a message without content", { messages: [{ role: "user" }] }],
    [
      "a tool message not answering a preceding tool_calls",
      {
        messages: [
          { role: "user", content: "x" },
          { role: "tool", tool_call_id: "call_1", content: "r" },
        ],
      },
    ],
    [
      "tool_calls without tool responses",
      {
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "f", arguments: "{}" } },
            ],
          },
          { role: "user", content: "y" },
        ],
      },
    ],
    [
      "five stop sequences",
      { messages: [{ role: "user", content: "x" }], stop: ["a", "b", "c", "d", "e"] },
    ],
    ["temperature above 2", { messages: [{ role: "user", content: "x" }], temperature: 3 }],
  ])("OpenAI emulation refuses %s with a 400 invalid_request_error", async (_name, extra) => {
    const response = await post(
      "/openai/v1/chat/completions",
      { authorization: "Bearer sk-sandbox" },
      { model: "gpt-4o-mini", ...extra },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", message: expect.any(String) },
    });
  });

  it("Gemini emulation refuses a Gemini 3 functionCall replayed without its thoughtSignature", async () => {
    const response = await post(
      "/gemini/v1beta/models/gemini-3-flash-preview:generateContent",
      { "x-goog-api-key": "sk-sandbox" },
      {
        contents: [
          { role: "user", parts: [{ text: "Weather in Oslo?" }] },
          {
            role: "model",
            parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }],
          },
          {
            role: "user",
            parts: [{ functionResponse: { name: "get_weather", response: { content: "Snow" } } }],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              {
                name: "get_weather",
                parameters: { type: "object", properties: { city: { type: "string" } } },
              },
            ],
          },
        ],
      },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: expect.stringMatching(/thought_signature/),
      },
    });
  });
});
