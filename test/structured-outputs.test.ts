/**
 * Structured outputs on an OpenAI-compatible route: the official `openai` package's
 * `chat.completions.parse` with a zod schema gets a reply that parses and validates against the
 * schema (the sandbox answers a `json_schema` request with an instance of the schema, as the
 * vendor does), streamed too; a strict schema the vendor refuses comes back as its 400.
 */
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const Event = z.object({
  name: z.string(),
  date: z.string(),
  attendees: z.array(z.object({ email: z.string(), role: z.enum(["host", "guest"]) })),
  capacity: z.number().int(),
  online: z.boolean(),
  notes: z.string().nullable(),
});

const GEMINI = "gemini-2.5-flash";

describe("structured outputs (OpenAI-compatible and Gemini routes)", () => {
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startTestGateway();
    const { key } = await createUser(gateway, { balanceMicros: 10_000_000 });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it("chat.completions.parse returns an object that validates against the schema", async () => {
    const completion = await client.chat.completions.parse({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Plan a launch event." }],
      response_format: zodResponseFormat(Event, "event"),
    });
    const parsed = completion.choices[0]!.message.parsed;
    expect(parsed).not.toBeNull();
    expect(Event.safeParse(parsed).success).toBe(true);
    expect(parsed!.attendees.length).toBeGreaterThan(0);
  });

  it("a streamed structured reply joins into the same kind of object", async () => {
    const stream = client.chat.completions.stream({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Plan a launch event." }],
      response_format: zodResponseFormat(Event, "event"),
    });
    const final = await stream.finalChatCompletion();
    expect(Event.safeParse(final.choices[0]!.message.parsed).success).toBe(true);
  });

  it("a Gemini route gets the schema as its responseSchema and answers an instance of it", async () => {
    const completion = await client.chat.completions.parse({
      model: GEMINI,
      messages: [{ role: "user", content: "Plan a launch event." }],
      response_format: zodResponseFormat(Event, "event"),
    });
    expect(Event.safeParse(completion.choices[0]!.message.parsed).success).toBe(true);
  });

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
});
