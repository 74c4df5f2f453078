/**
 * `/v1/responses` with the official openai package, over the sandbox's OpenAI route (served
 * natively), an OpenAI-compatible, an Anthropic and a Gemini route (translated): text, image
 * input, a function-tool round trip, continuation by `previous_response_id`, the event stream
 * in its documented order, reasoning, retrieve, input items and delete, per-account isolation
 * and refusals. Billing: `responses-billing.test.ts`.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { RESPONSES_ROUTES as ROUTES } from "./support/responses-routes.ts";

const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather of a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};

let gateway: TestGateway;
let client: OpenAI;
let user: { accountId: string; key: string };
let other: OpenAI;

beforeAll(async () => {
  gateway = await startTestGateway();
  user = await createUser(gateway);
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
  const stranger = await createUser(gateway);
  other = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: stranger.key, maxRetries: 0 });
});
afterAll(() => gateway.close());

describe.each(ROUTES)("responses over the $name", ({ model }) => {
  it("answers text with a Response object and usage", async () => {
    const response = await client.responses.create({
      model,
      instructions: "Answer briefly.",
      input: "Say hello to the gateway",
    });
    // The gateway's own id on every route (the sandbox's OpenAI mints hex ids, not passed on).
    expect(response.id).toMatch(/^resp_[0-9A-Za-z]{32}$/);
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.model).toBe(model);
    expect(response.instructions).toBe("Answer briefly.");
    expect(response.output_text).toMatch(/^Sandbox reply to Say hello to the gateway/);
    const message = response.output.find((item) => item.type === "message");
    expect(message?.id).toMatch(/^msg_/);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe(
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );
    expect(response.usage?.input_tokens_details.cached_tokens).toBeTypeOf("number");
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBeTypeOf("number");
  });

  it("takes image input", async () => {
    const response = await client.responses.create({
      model,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Describe" },
            { type: "input_image", image_url: PIXEL, detail: "low" },
          ],
        },
      ],
    });
    expect(response.output_text).toMatch(/^Sandbox reply to Describe: I saw 1 image\. /);
  });

  it("calls a function tool and continues with its output, stateless and chained", async () => {
    const first = await client.responses.create({
      model,
      input: "What is the weather in Paris?",
      tools: [weatherTool],
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    if (call?.type !== "function_call") throw new Error("expected a function call");
    expect(call.id).toMatch(/^fc_/);
    expect(JSON.parse(call.arguments)).toHaveProperty("city");
    const output = {
      type: "function_call_output" as const,
      call_id: call.call_id,
      output: "sunny",
    };

    // Stateless: the whole history is sent again.
    const replayed = await client.responses.create({
      model,
      input: [
        { role: "user", content: "What is the weather in Paris?" },
        ...first.output,
        output,
      ] as OpenAI.Responses.ResponseInput,
      tools: [weatherTool],
    });
    expect(replayed.output_text).toMatch(/^Sandbox reply using tool result: sunny/);

    // Chained: only the tool output is sent.
    const chained = await client.responses.create({
      model,
      previous_response_id: first.id,
      input: [output],
      tools: [weatherTool],
    });
    expect(chained.previous_response_id).toBe(first.id);
    expect(chained.output_text).toMatch(/^Sandbox reply using tool result: sunny/);
    // Stored items are listed with an id and a status, tool calls and outputs too.
    const stored = (await client.responses.inputItems.list(chained.id, { order: "asc" })).data;
    expect(
      stored.map((item) => [item.type, typeof item.id, (item as { status?: string }).status]),
    ).toEqual(stored.map((item) => [item.type, "string", "completed"]));
    expect(stored.map((item) => item.type)).toContain("function_call_output");
  });

  it("continues a conversation by previous_response_id, billing the replayed context", async () => {
    const first = await client.responses.create({ model, input: "My name is Ada Lovelace" });
    const fresh = await client.responses.create({ model, input: "What is my name?" });
    const next = await client.responses.create({
      model,
      previous_response_id: first.id,
      input: "What is my name?",
    });
    expect(next.output_text).toMatch(/^Sandbox reply to What is my name\?/);
    expect(next.usage?.input_tokens).toBeGreaterThan(fresh.usage?.input_tokens ?? 0);

    const items = [];
    for await (const item of client.responses.inputItems.list(next.id, { order: "asc" })) {
      items.push(item);
    }
    expect(items.map((item) => item.type)).toEqual(["message", "message", "message"]);
    expect(items.every((item) => typeof item.id === "string")).toBe(true);
    expect(items[0]).toMatchObject({
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: "My name is Ada Lovelace" }],
    });
    expect(items[0]?.id).toMatch(/^msg_/);
    expect(items[1]).toMatchObject({ role: "assistant", id: first.output[0]?.id });
    expect(items[2]).toMatchObject({
      role: "user",
      content: [{ type: "input_text", text: "What is my name?" }],
    });
    // Newest first by default, a page at a time.
    const page = await client.responses.inputItems.list(next.id, { limit: 2 });
    expect(page.data.map((item) => item.id)).toEqual([items[2]?.id, items[1]?.id]);
    expect(page.has_more).toBe(true);
  });

  it("streams the semantic events in their documented order", async () => {
    const stream = client.responses.stream({ model, input: "Stream please" });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const types = events.map((event) => event.type);
    const deltas = types.filter((type) => type === "response.output_text.delta").length;
    expect(deltas).toBeGreaterThan(0);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(deltas).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(final.output_text).toMatch(/^Sandbox reply to Stream please/);
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    // The streamed response was stored, with the same items.
    const stored = await client.responses.retrieve(final.id);
    expect(stored.output.map((item) => item.id)).toEqual(final.output.map((item) => item.id));
    expect(stored.output_text).toBe(final.output_text);
    expect(stored.usage).toEqual(final.usage);
  });

  it("streams a function call's arguments", async () => {
    const stream = client.responses.stream({
      model,
      input: "Weather in Rome?",
      tools: [weatherTool],
      tool_choice: "required",
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types[2]).toBe("response.output_item.added");
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types.slice(-3)).toEqual([
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const call = final.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ name: "get_weather", status: "completed" });
  });
});

// The sandbox thinks aloud (`reasoning=` fault) on its OpenAI-protocol routes only.
describe.each(ROUTES.slice(0, 2))("reasoning over the $name", ({ model }) => {
  it("comes back as a reasoning item with a summary, before the message", async () => {
    const response = await client.responses.create({
      model,
      input: "[[sandbox:reasoning=12]] Think first",
    });
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = response.output[0];
    if (reasoning?.type !== "reasoning") throw new Error("expected reasoning");
    expect(reasoning.id).toMatch(/^rs_/);
    expect(reasoning.summary[0]?.text).toMatch(/^Thinking it over: /);
    expect(response.output_text).toMatch(/^Sandbox reply to /);
  });

  it("streams its summary events before the message's", async () => {
    const stream = client.responses.stream({
      model,
      input: "[[sandbox:reasoning=12]] Think first",
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types.slice(2, 4)).toEqual([
      "response.output_item.added",
      "response.reasoning_summary_part.added",
    ]);
    const firstText = types.indexOf("response.output_text.delta");
    expect(types.indexOf("response.reasoning_summary_text.done")).toBeLessThan(firstText);
    expect(final.output[0]).toMatchObject({ type: "reasoning" });
    expect((final.output[0] as { summary: { text: string }[] }).summary[0]?.text).toMatch(
      /^Thinking it over: /,
    );
  });
});

describe.each(ROUTES)("stored responses over the $name", ({ model }) => {
  it("are read back and deleted, then not found", async () => {
    const created = await client.responses.create({ model, input: "Keep this" });
    const read = await client.responses.retrieve(created.id);
    expect(read.id).toBe(created.id);
    expect(read.output).toEqual(created.output);
    expect(read.output_text).toBe(created.output_text);
    const deleted = await gateway.request(`/v1/responses/${created.id}`, {
      method: "DELETE",
      key: user.key,
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: created.id, object: "response", deleted: true });
    const again = await client.responses.create({ model, input: "Keep this too" });
    await client.responses.delete(again.id);
    await expect(client.responses.retrieve(again.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("are not kept with store: false", async () => {
    const created = await client.responses.create({ model, input: "Forget this", store: false });
    expect((created as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("belong to their account: another account's id is not found", async () => {
    const created = await client.responses.create({ model, input: "Mine" });
    const error = await other.responses.retrieve(created.id).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: "invalid_request_error",
      code: "response_not_found",
      message: `Response with id '${created.id}' not found.`,
    });
    await expect(other.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      other.responses.inputItems.list(created.id).then((page) => page.data),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      other.responses.create({ model, previous_response_id: created.id, input: "Yours?" }),
    ).rejects.toMatchObject({
      status: 400,
      code: "previous_response_not_found",
      param: "previous_response_id",
    });
    // Still there for its owner.
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
  });
});

describe("requests the gateway refuses", () => {
  const model = "gpt-4o-mini";

  it("refuses hosted tools with unsupported_parameter", async () => {
    await expect(
      client.responses.create({ model, input: "Search", tools: [{ type: "web_search" }] }),
    ).rejects.toMatchObject({ status: 400, code: "unsupported_parameter", param: "tools[0]" });
  });

  it("refuses chat-only fields with a hint, and a tool output without its call", async () => {
    const refused = await gateway.request("/v1/responses", {
      key: user.key,
      json: { model, messages: [{ role: "user", content: "Hi" }] },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: "unsupported_parameter", param: "messages" },
    });
    await expect(
      client.responses.create({
        model,
        input: [{ type: "function_call_output", call_id: "call_nowhere", output: "x" }],
      }),
    ).rejects.toMatchObject({ status: 400, param: "input[0].call_id" });
  });
});
