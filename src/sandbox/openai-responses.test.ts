import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { AUTH_HEADERS } from "./test-kit.ts";

let sandbox: RunningSandbox;
let client: OpenAI;
beforeAll(async () => {
  sandbox = await startSandbox({});
  client = new OpenAI({ baseURL: `${sandbox.url}/openai/v1`, apiKey: "sk-test", maxRetries: 0 });
});
afterAll(() => sandbox.close());

const post = (body: unknown, headers: Record<string, string> = AUTH_HEADERS) =>
  fetch(`${sandbox.url}/openai/v1/responses`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });

describe("the sandbox's OpenAI Responses endpoint", () => {
  it("answers a Response object the SDK reads, with usage", async () => {
    const response = await client.responses.create({
      model: "gpt-4o-mini",
      instructions: "Be brief.",
      input: "Hello there",
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toMatch(/^Sandbox reply to Hello there:/);
    expect(response.output[0]?.id).toMatch(/^msg_/);
    expect(response.usage?.total_tokens).toBe(
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );
  });

  it("calls a tool, then answers with its output", async () => {
    const tools = [
      {
        type: "function" as const,
        name: "lookup",
        strict: false,
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      },
    ];
    const first = await client.responses.create({ model: "gpt-4o-mini", input: "Find", tools });
    const call = first.output[0];
    if (call?.type !== "function_call") throw new Error("expected a function call");
    expect(call.id).toMatch(/^fc_/);
    const second = await client.responses.create({
      model: "gpt-4o-mini",
      input: [
        { role: "user", content: "Find" },
        call,
        { type: "function_call_output", call_id: call.call_id, output: "found it" },
      ],
      tools,
    });
    expect(second.output_text).toMatch(/^Sandbox reply using tool result: found it/);
  });

  it("streams the documented event order, numbered from 0", async () => {
    const stream = client.responses.stream({ model: "gpt-4o-mini", input: "Stream it" });
    const types: string[] = [];
    const numbers: number[] = [];
    for await (const event of stream) {
      types.push(event.type);
      numbers.push(event.sequence_number);
    }
    const final = await stream.finalResponse();
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(numbers).toEqual(numbers.map((_, index) => index));
    expect(final.output_text).toMatch(/^Sandbox reply to Stream it:/);
  });

  it("ends a capped answer as incomplete", async () => {
    const response = await client.responses.create({
      model: "gpt-4o-mini",
      input: "[[sandbox:words=40]] long",
      max_output_tokens: 16,
    });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("refuses what OpenAI refuses, in its words", async () => {
    const cases: [unknown, number, Record<string, unknown>][] = [
      [
        { model: "m", input: "x", max_tokens: 5 },
        400,
        {
          message: "Unknown parameter: 'max_tokens'.",
          param: "max_tokens",
          code: "unknown_parameter",
        },
      ],
      [{ model: "m", messages: [] }, 400, { param: null, code: "unsupported_parameter" }],
      [{ input: "x" }, 400, { param: "model", code: "missing_required_parameter" }],
      [{ model: "m", input: { a: 1 } }, 400, { param: "input", code: "invalid_type" }],
      [
        { model: "m", input: "x", max_output_tokens: 0 },
        400,
        { param: "max_output_tokens", code: "integer_below_min_value" },
      ],
      [
        { model: "m", input: "x", tools: [{ type: "function", function: { name: "f" } }] },
        400,
        { param: "tools[0].name", code: "missing_required_parameter" },
      ],
      [
        { model: "m", input: [{ type: "function_call_output", call_id: "call_x", output: "1" }] },
        400,
        {
          message: "No tool call found for function call output with call_id call_x.",
          param: "input",
          code: null,
        },
      ],
      [
        { model: "m", input: "x", previous_response_id: "resp_x" },
        400,
        { param: "previous_response_id", code: "previous_response_not_found" },
      ],
    ];
    for (const [body, status, error] of cases) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect((await response.json()).error).toMatchObject({
        type: "invalid_request_error",
        ...error,
      });
    }
    const anonymous = await post(
      { model: "m", input: "x" },
      { "content-type": "application/json" },
    );
    expect(anonymous.status).toBe(401);
  });

  it("injects faults: an error status, and a stream cut after n events", async () => {
    const failed = await post({ model: "m", input: "[[sandbox:status=429]] busy" });
    expect(failed.status).toBe(429);
    const cut = await post({ model: "m", input: "[[sandbox:drop=4]] cut", stream: true });
    const text = await cut.text().catch(() => "");
    expect(text.match(/^event: /gm)?.length ?? 0).toBeLessThanOrEqual(4);
    expect(text).not.toContain("response.completed");
  });
});
