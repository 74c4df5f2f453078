/**
 * Structured outputs on every kind of route — OpenAI (native constrained decoding, and its own
 * Responses API), an OpenAI-compatible vendor, Anthropic (a forced output tool) and Gemini
 * (`responseSchema`) — through the official `openai` package's parse helpers:
 * `chat.completions.parse` / `.stream` and `responses.parse` / `.stream` with a zod schema get
 * an object that validates against the schema. Where the vendor does not constrain decoding,
 * the gateway validates the whole answer: one off the schema is `502
 * structured_output_invalid`, charged nothing; a schema it cannot compile is a 400 before any
 * upstream call. A strict schema the vendor refuses comes back as its 400.
 */
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { RESPONSES_ROUTES as ROUTES } from "./support/responses-routes.ts";

const Event = z.object({
  name: z.string(),
  date: z.string(),
  attendees: z.array(z.object({ email: z.string(), role: z.enum(["host", "guest"]) })),
  capacity: z.number().int(),
  online: z.boolean(),
  notes: z.string().nullable(),
});

let gateway: TestGateway;
let client: OpenAI;
let user: { accountId: string; key: string };

beforeAll(async () => {
  gateway = await startTestGateway();
  user = await createUser(gateway, { balanceMicros: 10_000_000 });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
});
afterAll(() => gateway?.close());

const messages = [{ role: "user" as const, content: "Plan a launch event." }];

describe.each(ROUTES)("a strict schema over the $name", ({ model }) => {
  it("chat.completions.parse returns an object that validates against the schema", async () => {
    const completion = await client.chat.completions.parse({
      model,
      messages,
      response_format: zodResponseFormat(Event, "event"),
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.tool_calls ?? []).toEqual([]);
    expect(Event.safeParse(choice.message.parsed).success).toBe(true);
    expect(choice.message.parsed!.attendees.length).toBeGreaterThan(0);
  });

  it("a streamed reply joins into the same kind of object", async () => {
    const stream = client.chat.completions.stream({
      model,
      messages,
      response_format: zodResponseFormat(Event, "event"),
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe("stop");
    expect(Event.safeParse(final.choices[0]!.message.parsed).success).toBe(true);
  });

  it("responses.parse returns output_parsed that validates against the schema", async () => {
    const response = await client.responses.parse({
      model,
      input: "Plan a launch event.",
      text: { format: zodTextFormat(Event, "event") },
    });
    expect(response.status).toBe("completed");
    expect(response.output.filter((item) => item.type === "function_call")).toEqual([]);
    expect(Event.safeParse(response.output_parsed).success).toBe(true);
  });

  it("responses.stream ends in a response whose text parses against the schema", async () => {
    const stream = client.responses.stream({
      model,
      input: "Plan a launch event.",
      text: { format: zodTextFormat(Event, "event") },
    });
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(Event.safeParse(final.output_parsed).success).toBe(true);
  });
});

describe("the gateway's own check of a strict answer", () => {
  const offSchema = [{ role: "system" as const, content: "[[sandbox:off-schema]]" }, ...messages];

  it.each(["claude-haiku-4-5", "gemini-2.5-flash", "mistral-small-latest"])(
    "%s: an answer off the schema is 502 structured_output_invalid, charged nothing",
    async (model) => {
      const { key } = await createUser(gateway, { balanceMicros: 1_000_000 });
      const payer = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
      const chat = await payer.chat.completions
        .parse({ model, messages: offSchema, response_format: zodResponseFormat(Event, "event") })
        .catch((caught: unknown) => caught);
      expect(chat).toBeInstanceOf(OpenAI.APIError);
      expect(chat).toMatchObject({ status: 502, code: "structured_output_invalid" });
      expect((chat as Error).message).toMatch(
        /does not match the requested JSON schema: \/ must have required property 'name'/,
      );
      const responses = await payer.responses
        .parse({
          model,
          input: [
            { role: "developer", content: "[[sandbox:off-schema]]" },
            { role: "user", content: "Plan a launch event." },
          ],
          text: { format: zodTextFormat(Event, "event") },
        })
        .catch((caught: unknown) => caught);
      expect(responses).toMatchObject({ status: 502, code: "structured_output_invalid" });
      const balance = (await (await gateway.request("/v1/account/balance", { key })).json()) as {
        balance_micros: number;
      };
      expect(balance.balance_micros).toBe(1_000_000);
    },
  );

  it("an OpenAI route's answer is checked the same way (the drift fault stands in for a vendor that drifts)", async () => {
    // OpenAI constrains decoding itself, so there the check never fails; it guards the
    // OpenAI-compatible vendors that accept the field without honouring it.
    const error = await client.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: offSchema,
        response_format: zodResponseFormat(Event, "event"),
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, code: "structured_output_invalid" });
  });

  it("a schema that cannot be compiled is 400 invalid_json_schema, before any upstream call", async () => {
    const error = await client.chat.completions
      .create({
        model: "claude-haiku-4-5",
        messages,
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "broken",
            strict: true,
            schema: {
              type: "object",
              properties: { a: { $ref: "#/$defs/missing" } },
              required: ["a"],
              additionalProperties: false,
            },
          },
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({
      code: "invalid_json_schema",
      param: "response_format.json_schema.schema",
    });
  });

  it("Anthropic answers a schema whose root is not an object through a wrapped tool", async () => {
    const completion = await client.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [{ role: "user", content: "List three colours." }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "colours",
          schema: { type: "array", items: { type: "string" }, minItems: 3, maxItems: 3 },
        },
      },
    });
    const colours = JSON.parse(completion.choices[0]!.message.content!) as unknown;
    expect(Array.isArray(colours)).toBe(true);
    expect(colours).toHaveLength(3);
  });
});

describe("JSON mode and vendor refusals", () => {
  it("json_object answers a JSON object", async () => {
    const completion = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Answer in JSON." }],
      response_format: { type: "json_object" },
    });
    const content = JSON.parse(completion.choices[0]!.message.content!) as unknown;
    expect(typeof content).toBe("object");
    expect(Array.isArray(content)).toBe(false);
  });

  it("a strict schema the vendor refuses is its 400, naming the problem", async () => {
    const error = await client.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "x" }],
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "loose",
            strict: true,
            schema: { type: "object", properties: { a: { type: "string" } } },
          },
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(
      /Invalid schema for response_format 'loose'.*additionalProperties/,
    );
  });

  it("the Responses API's refusal of a loose strict schema is its 400, on the native route", async () => {
    const error = await client.responses
      .create({
        model: "gpt-4o-mini",
        input: "x",
        text: {
          format: {
            type: "json_schema",
            name: "loose",
            strict: true,
            schema: { type: "object", properties: { a: { type: "string" } } },
          },
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ code: "invalid_json_schema", param: "text.format.schema" });
  });
});
