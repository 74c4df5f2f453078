import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { messagesBody, type NamedEvent, namedEvents, postMessages } from "./anthropic-test-kit.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { readAll, waitFor } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

type Data = Record<string, unknown> & {
  index?: number;
  delta?: Record<string, unknown>;
  usage?: Record<string, number>;
  message?: Record<string, unknown> & { usage?: Record<string, number> };
};

async function stream(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ events: NamedEvent[]; text: string; error: unknown }> {
  const response = await postMessages(sandbox.url, { ...body, stream: true }, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  expect(response.headers.get("request-id")).toMatch(/^req_011C/);
  const { text, error } = await readAll(response);
  return { events: namedEvents(text), text, error };
}

const parsed = (events: NamedEvent[]) => events.map((event) => JSON.parse(event.data) as Data);

/** Event names with each block's deltas collapsed to `delta:<type>`, for readable order checks. */
function shape(events: NamedEvent[]): string[] {
  const out: string[] = [];
  for (const [i, data] of parsed(events).entries()) {
    const name = events[i]?.event ?? "";
    expect(data.type).toBe(name);
    const label = name === "content_block_delta" ? `delta:${String(data.delta?.type)}` : name;
    if (out.at(-1) !== label) out.push(label);
  }
  return out;
}

const weatherTool = {
  name: "get_weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("message streams", () => {
  it("sends the exact event order for text, and the same text and usage as non-stream", async () => {
    const body = messagesBody("Stream me something");
    const { events, text } = await stream(body);
    expect(text).toMatch(/^event: message_start\ndata: \{/);
    expect(shape(events)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const data = parsed(events);
    expect(data[0]?.message).toMatchObject({
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      usage: {
        input_tokens: 3,
        output_tokens: 1,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
    expect(data[1]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    const streamed = data.map((event) => event.delta?.text ?? "").join("");
    const whole = (await (await postMessages(sandbox.url, body)).json()) as {
      content: Array<{ text: string }>;
      usage: { output_tokens: number };
    };
    expect(streamed).toBe(whole.content[0]?.text);
    expect(data.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: whole.usage.output_tokens },
    });
  });

  it("streams thinking (with signature) before a tool_use whose JSON starts with an empty fragment", async () => {
    const { events } = await stream(
      messagesBody("Weather in Rome?", {
        max_tokens: 4096,
        tools: [weatherTool],
        thinking: { type: "enabled", budget_tokens: 1024 },
      }),
    );
    expect(shape(events)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "delta:thinking_delta",
      "delta:signature_delta",
      "content_block_stop",
      "content_block_start",
      "delta:input_json_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const data = parsed(events);
    const toolStart = data.find(
      (event) => event.type === "content_block_start" && event.index === 1,
    );
    expect(toolStart?.content_block).toEqual({
      type: "tool_use",
      id: expect.stringMatching(/^toolu_01/),
      name: "get_weather",
      input: {},
    });
    const fragments = data
      .filter((event) => event.delta?.type === "input_json_delta")
      .map((event) => String(event.delta?.partial_json));
    expect(fragments[0]).toBe("");
    expect(fragments.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(fragments.join(""))).toEqual({ city: expect.stringMatching(/^[a-z]+/) });
    expect(data.at(-2)?.delta).toEqual({ stop_reason: "tool_use", stop_sequence: null });
  });

  it("leaves both usage objects out under no-usage", async () => {
    const data = parsed(
      (await stream(messagesBody("hi"), { "x-sandbox-fault": "no-usage" })).events,
    );
    expect(data[0]?.message?.usage).toBeUndefined();
    expect(data.at(-2)?.usage).toBeUndefined();
  });
});

describe("stream faults", () => {
  it("malformed=n cuts frame n's JSON in half and ends without message_stop", async () => {
    const { events, error } = await stream(messagesBody("hi"), {
      "x-sandbox-fault": "malformed=2",
    });
    expect(error).toBeUndefined();
    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
    ]);
    expect(() => JSON.parse(events[2]?.data ?? "")).toThrow();
  });

  it("status with malformed=n sends a mid-stream error event after a 200", async () => {
    const { events } = await stream(messagesBody("hi"), {
      "x-sandbox-fault": "status=529;malformed=3",
    });
    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "error",
    ]);
    expect(JSON.parse(events[3]?.data ?? "")).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
  });

  it("drop=n cuts the connection after n frames and counts it as dropped", async () => {
    const { events, error } = await stream(messagesBody("hi"), { "x-sandbox-fault": "drop=2" });
    expect(error).toBeDefined();
    expect(events.map((event) => event.event)).toEqual(["message_start", "content_block_start"]);
    await waitFor(() => sandbox.stats().dropped === 1);
  });

  it("counts a client that leaves mid-stream as aborted", async () => {
    const controller = new AbortController();
    const response = await postMessages(
      sandbox.url,
      messagesBody("[[sandbox:chunk-delay=50;words=60]] go", { stream: true }),
      { signal: controller.signal },
    );
    await response.body?.getReader().read();
    controller.abort();
    await waitFor(() => sandbox.stats().aborted === 1);
    expect(sandbox.stats().open).toBe(0);
  });
});
