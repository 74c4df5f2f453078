/**
 * Drop-in fidelity for OpenAI clients, through the official `openai` package (and the Anthropic
 * SDK for Claude Code's model names): `null` read as "not set" for every optional field, the
 * output cap and sampling mapped per model family (the sandbox's request log shows what the
 * vendor received, and the sandbox refuses what OpenAI refuses), `n` served and billed where
 * the vendor can and refused clearly where it cannot, and unknown models answered with the
 * closest ids the key may use.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface LoggedRequest {
  path: string;
  body: Record<string, unknown> | null;
}

interface UsageRow {
  request_id: string;
  output_tokens: number;
  cost_micros: number;
  held_micros: number;
  overrun_micros: number;
}

let gateway: TestGateway;
let openai: OpenAI;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  key = (await createUser(gateway, { balanceMicros: 50_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(() => gateway?.close());

/** The body the sandbox received for the request whose prompt holds `marker`. */
async function upstreamBody(marker: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=200`);
  const { requests } = (await response.json()) as { requests: LoggedRequest[] };
  const found = requests.filter((request) => JSON.stringify(request.body).includes(marker));
  expect(found).toHaveLength(1);
  return found[0]!.body!;
}

async function usageRow(requestId: string | null): Promise<UsageRow | undefined> {
  const response = await gateway.request("/v1/account/usage?limit=1000", { key });
  const { data } = (await response.json()) as { data: UsageRow[] };
  return data.find((row) => row.request_id === requestId);
}

describe("explicit null is 'not set'", () => {
  it("takes null for every optional chat field, top level and nested", async () => {
    const marker = `absent-${Math.random()}`;
    const nulls = Object.fromEntries(
      [
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stream",
        "stream_options",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "seed",
        "tools",
        "tool_choice",
        "response_format",
        "user",
        "parallel_tool_calls",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "metadata",
        "store",
        "reasoning_effort",
        "verbosity",
        "prediction",
        "prompt_cache_key",
        "safety_identifier",
        "service_tier",
        "modalities",
        "audio",
        "web_search_options",
        "functions",
        "function_call",
      ].map((field) => [field, null]),
    );
    const response = await openai.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "Be brief.", name: null },
          { role: "user", content: `first ${marker}`, name: null },
          {
            role: "assistant",
            content: "an earlier answer",
            tool_calls: null,
            refusal: null,
            audio: null,
            function_call: null,
          },
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: PIXEL, detail: null } }],
          },
        ],
        ...nulls,
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(response.response.status).toBe(200);
    expect(response.data.choices).toHaveLength(1);
    expect(response.response.headers.get("x-switchyard-warnings")).toBeNull();
    const sent = await upstreamBody(marker);
    expect(JSON.stringify(sent)).not.toMatch(/:null\b/);
  });

  it("takes null for the optional fields of embeddings and speech", async () => {
    const embedding = await openai.embeddings.create({
      model: "text-embedding-v4",
      input: "null fields",
      dimensions: null,
      encoding_format: null,
      user: null,
    } as unknown as OpenAI.EmbeddingCreateParams);
    expect(embedding.data[0]?.embedding.length).toBe(1024);
    const speech = await gateway.request("/v1/audio/speech", {
      key,
      json: {
        model: "tts3-flash",
        input: "Null fields.",
        voice: null,
        response_format: null,
        instructions: null,
        speed: null,
      },
    });
    expect(speech.status).toBe(200);
    expect(speech.headers.get("content-type")).toBe("audio/mpeg");
  });

  it("still refuses null for a required field", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: { model: "gpt-4o-mini", messages: null },
    });
    await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "messages",
    });
  });
});

describe("output cap and sampling per model family", () => {
  it("sends a GPT-5-family cap as max_completion_tokens, whichever name the client used", async () => {
    for (const field of ["max_completion_tokens", "max_tokens"] as const) {
      const marker = `cap-${field}-${Math.random()}`;
      const completion = await openai.chat.completions.create({
        model: "gpt-5-mini",
        [field]: 40,
        messages: [{ role: "user", content: `Cap me ${marker}` }],
      });
      expect(completion.choices[0]?.finish_reason).toBe("stop");
      const sent = await upstreamBody(marker);
      expect(sent.max_completion_tokens).toBe(40);
      expect(sent).not.toHaveProperty("max_tokens");
    }
  });

  it("drops sampling a reasoning model refuses, and says so", async () => {
    const marker = `sampling-${Math.random()}`;
    const response = await openai.chat.completions
      .create({
        model: "o4-mini",
        temperature: 0.3,
        top_p: 1,
        frequency_penalty: 0.4,
        messages: [{ role: "user", content: `Sample ${marker}` }],
      })
      .withResponse();
    const warnings = response.response.headers.get("x-switchyard-warnings") ?? "";
    expect(warnings).toContain("unsupported:temperature");
    expect(warnings).toContain("unsupported:frequency_penalty");
    const sent = await upstreamBody(marker);
    expect(sent).toMatchObject({ top_p: 1, max_completion_tokens: 100_000 });
    expect(sent).not.toHaveProperty("temperature");
    expect(sent).not.toHaveProperty("frequency_penalty");
  });

  it("keeps Claude's cap with a thinking budget within the model's limit, and holds for both", async () => {
    const thinking = { type: "enabled", budget_tokens: 2048 };
    const marker = `thinking-${Math.random()}`;
    const completion = await openai.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [{ role: "user", content: `Think ${marker}` }],
      thinking,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0]?.message.content).toMatch(/^Sandbox reply to Think/);
    expect(await upstreamBody(marker)).toMatchObject({ max_tokens: 64_000, thinking });
    const quote = await gateway.request("/v1/billing/quote", {
      key,
      json: {
        model: "claude-haiku-4-5",
        max_tokens: 1000,
        thinking,
        messages: [{ role: "user", content: "x" }],
      },
    });
    const { line_items } = (await quote.json()) as {
      line_items: Array<{ item: string; units: number }>;
    };
    expect(line_items.find((item) => item.item === "output")?.units).toBe(3048);
  });

  it("keeps max_tokens and sampling for the other models", async () => {
    const marker = `plain-${Math.random()}`;
    await openai.chat.completions.create({
      model: "gpt-4o-mini",
      temperature: 0.3,
      max_tokens: 40,
      messages: [{ role: "user", content: `Plain ${marker}` }],
    });
    expect(await upstreamBody(marker)).toMatchObject({ max_tokens: 40, temperature: 0.3 });
  });
});

describe("n choices", () => {
  it("returns n choices, holds n times the cap and bills every choice", async () => {
    const request = {
      model: "gpt-4o-mini",
      max_tokens: 10,
      messages: [{ role: "user" as const, content: "Give me two answers please" }],
    };
    const quote = async (n: number) => {
      const response = await gateway.request("/v1/billing/quote", { key, json: { ...request, n } });
      const body = (await response.json()) as {
        line_items: Array<{ item: string; units: number }>;
      };
      return body.line_items.find((item) => item.item === "output")?.units;
    };
    expect(await quote(2)).toBe(2 * ((await quote(1)) ?? 0));

    const response = await openai.chat.completions.create({ ...request, n: 2 }).withResponse();
    const completion = response.data;
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1]);
    expect(completion.choices.map((choice) => choice.finish_reason)).toEqual(["length", "length"]);
    expect(completion.choices[0]?.message.content).not.toBe(completion.choices[1]?.message.content);
    expect(completion.usage?.completion_tokens).toBe(20);
    const row = await usageRow(response.response.headers.get("x-request-id"));
    expect(row).toMatchObject({ output_tokens: 20, overrun_micros: 0 });
    expect(row!.cost_micros).toBeLessThanOrEqual(row!.held_micros);
    expect(Number(response.response.headers.get("x-switchyard-cost-micros"))).toBe(
      row!.cost_micros,
    );
  });

  it("streams n choices, each with its index and finish reason", async () => {
    const stream = await openai.chat.completions.create({
      model: "gpt-4o-mini",
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Two streams please" }],
    });
    const text = ["", ""];
    const finish: Array<string | null> = [null, null];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text[choice.index] += choice.delta.content ?? "";
        finish[choice.index] = choice.finish_reason ?? finish[choice.index] ?? null;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(finish).toEqual(["stop", "stop"]);
    expect(text[0]).toMatch(/^Sandbox reply to Two streams please/);
    expect(text[1]).toMatch(/^Sandbox reply to Two streams please/);
    expect(text[0]).not.toBe(text[1]);
    expect(usage?.completion_tokens).toBe(48);
  });

  it("refuses n above 1 clearly where the vendor returns one choice", async () => {
    const error = await openai.chat.completions
      .create({ model: "claude-haiku-4-5", n: 2, messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_parameter", param: "n" });
    expect((error as Error).message).toContain("returns one choice per request");
  });
});

describe("unknown models", () => {
  it("names the closest ids the key may use", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: { model: "gpt-4o-mni", messages: [{ role: "user", content: "hi" }] },
    });
    const error = await expectGatewayError(response, {
      status: 404,
      type: "invalid_request_error",
      code: "model_not_found",
      param: "model",
    });
    expect(error.message).toMatch(/Did you mean 'gpt-4o-mini'/);
  });

  it("suggests only the models a restricted key may use", async () => {
    const restricted = await createUser(gateway, { keyOptions: { models: ["gpt-4o"] } });
    const response = await gateway.request("/v1/chat/completions", {
      key: restricted.key,
      json: { model: "gpt-4o-mni", messages: [{ role: "user", content: "hi" }] },
    });
    const error = await expectGatewayError(response, {
      status: 404,
      type: "invalid_request_error",
      code: "model_not_found",
    });
    expect(error.message).toContain("Did you mean 'gpt-4o'?");
  });

  it("answers a Claude id newer than the catalog with the nearest Claude models", async () => {
    const anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const error = await anthropic.messages
      .create({
        model: "claude-sonnet-4-7",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    const message = (error as InstanceType<typeof Anthropic.NotFoundError>).message;
    expect(message).toMatch(/Did you mean 'claude-sonnet-4-6', 'claude-sonnet-4-5' or /);
    expect(message).toContain("model_aliases");
  });
});

const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
