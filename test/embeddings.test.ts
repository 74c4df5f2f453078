/**
 * `POST /v1/embeddings` end to end: the official `openai` package against a real gateway whose
 * routes point at the in-process sandbox (DashScope compatible mode, Voyage, Gemini).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { countTokens } from "../src/billing/index.ts";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface Logged {
  path: string;
  body: Record<string, unknown>;
}

interface UsageRow {
  request_id: string;
  model: string;
  status: string;
  input_tokens: number;
  cost_micros: number;
  usage_source: string | null;
}

let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gateway = await startTestGateway();
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.adminKey, maxRetries: 0 });
});
afterAll(() => gateway.close());
beforeEach(async () => {
  await fetch(`${gateway.sandboxUrl}/__sandbox/reset`, { method: "POST" });
});

async function sandboxLog(): Promise<Logged[]> {
  const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
  return ((await response.json()) as { requests: Logged[] }).requests;
}

const texts = (count: number, prefix = "text") =>
  Array.from({ length: count }, (_, i) => `${prefix} number ${i} about ${i % 7} things`);
const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const words = (count: number, seed: number) =>
  Array.from({ length: count }, (_, i) => `w${(i * 31 + seed) % 997}`).join(" ");

async function balance(key: string) {
  const response = await gateway.request("/v1/account/balance", { key });
  return (await response.json()) as { balance_micros: number; held_micros: number };
}

async function usageRows(key: string): Promise<UsageRow[]> {
  const response = await gateway.request("/v1/account/usage?limit=1000", { key });
  return ((await response.json()) as { data: UsageRow[] }).data;
}

describe("batches on text-embedding-v4 (DashScope, 10 inputs per call)", () => {
  const inputs = texts(250);

  it("splits 250 inputs into 25 upstream calls and answers in order (SDK default: base64)", async () => {
    const result = await client.embeddings.create({ model: "text-embedding-v4", input: inputs });
    expect(result.object).toBe("list");
    expect(result.model).toBe("text-embedding-v4");
    expect(result.data).toHaveLength(250);
    expect(result.data.map((item) => item.index)).toEqual(inputs.map((_, i) => i));
    expect(result.data.every((item) => item.object === "embedding")).toBe(true);
    expect(result.data[0]?.embedding).toHaveLength(1024);
    expect(norm(result.data[7]!.embedding)).toBeCloseTo(1, 5);

    const calls = (await sandboxLog()).filter((entry) => entry.path.endsWith("/embeddings"));
    expect(calls).toHaveLength(25);
    expect(calls.every((call) => call.path === "/dashscope/compatible-mode/v1/embeddings")).toBe(
      true,
    );
    const sent = calls.flatMap((call) => call.body.input as string[]);
    expect([...sent].sort()).toEqual([...inputs].sort());
    expect(calls.every((call) => (call.body.input as string[]).length === 10)).toBe(true);
    expect(calls.every((call) => call.body.encoding_format === "float")).toBe(true);
    expect(calls.every((call) => call.body.dimensions === 1024)).toBe(true);

    const floats = await client.embeddings.create({
      model: "text-embedding-v4",
      input: inputs,
      encoding_format: "float",
    });
    expect(floats.data.map((item) => item.embedding)).toEqual(
      result.data.map((item) => item.embedding),
    );
    for (const index of [0, 9, 10, 123, 249]) {
      const single = await client.embeddings.create({
        model: "text-embedding-v4",
        input: inputs[index]!,
        encoding_format: "float",
      });
      expect(single.data).toHaveLength(1);
      expect(single.data[0]?.index).toBe(0);
      expect(single.data[0]?.embedding).toEqual(floats.data[index]?.embedding);
    }
  });

  it("returns base64 strings when asked explicitly, the little-endian float32 of the floats", async () => {
    const explicit = (await client.embeddings.create({
      model: "text-embedding-v4",
      input: inputs.slice(0, 12),
      encoding_format: "base64",
      dimensions: 256,
    })) as unknown as { data: Array<{ embedding: string }> };
    const floats = await client.embeddings.create({
      model: "text-embedding-v4",
      input: inputs.slice(0, 12),
      encoding_format: "float",
      dimensions: 256,
    });
    explicit.data.forEach((item, index) => {
      expect(typeof item.embedding).toBe("string");
      const bytes = Buffer.from(item.embedding, "base64");
      const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
      expect(decoded).toEqual(floats.data[index]?.embedding);
    });
  });

  it("sums the usage of the parts and charges it, with the cost in a header", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const batch = texts(23, "usage");
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "text-embedding-v4", input: batch },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-batch-parts")).toBe("3");
    expect(response.headers.get("x-switchyard-upstream-model")).toBe("text-embedding-v4");
    const body = (await response.json()) as {
      usage: { prompt_tokens: number; total_tokens: number };
    };
    // The sandbox counts one token per word: 6 words per text.
    expect(body.usage).toEqual({ prompt_tokens: 23 * 6, total_tokens: 23 * 6 });
    const cost = Number(response.headers.get("x-switchyard-cost-micros"));
    expect(cost).toBe(Math.ceil((23 * 6 * 70_000) / 1e6));
    const after = await balance(user.key);
    expect(after).toEqual({ ...after, balance_micros: 1_000_000 - cost, held_micros: 0 });
    const [row] = await usageRows(user.key);
    expect(row).toMatchObject({
      model: "text-embedding-v4",
      status: "succeeded",
      input_tokens: 23 * 6,
      cost_micros: cost,
      usage_source: "upstream",
    });
  });

  it("holds the counted input before the call: the quote, and 402 when it does not fit", async () => {
    const batch = texts(40, "hold");
    const quote = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: { model: "text-embedding-v4", input: batch },
    });
    expect(quote.status).toBe(200);
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    const counted = await countTokens(batch.join("\n"));
    expect(hold).toBe(Math.ceil(((Math.ceil(counted * 1.25) + 40) * 70_000) / 1e6));

    const poor = await createUser(gateway, { balanceMicros: hold - 1 });
    const refused = await gateway.request("/v1/embeddings", {
      key: poor.key,
      json: { model: "text-embedding-v4", input: batch },
    });
    expect(refused.status).toBe(402);
    expect((await sandboxLog()).filter((entry) => entry.path.endsWith("/embeddings"))).toEqual([]);
  });
});

describe("a failing part", () => {
  it("fails the whole request with a gateway error after retries, and charges nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const batch = texts(30, "fault");
    batch[15] = "[[sandbox:status=503]] this one fails";
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "text-embedding-v4", input: batch },
    });
    const error = await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_error",
    });
    expect(error.message).toContain("Batch part 2 of 3 (inputs 10-19) failed after 3 attempts");
    const failing = (await sandboxLog()).filter((entry) =>
      (entry.body.input as string[] | undefined)?.includes(batch[15]!),
    );
    expect(failing).toHaveLength(3);
    expect(await balance(user.key)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });
    const rows = await usageRows(user.key);
    expect(rows.every((row) => row.cost_micros === 0 && row.status !== "succeeded")).toBe(true);
  });

  it("does not retry a rejected part, and passes the vendor's status and text on", async () => {
    const batch = texts(25, "reject");
    batch[3] = "[[sandbox:status=400]] bad";
    const response = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "text-embedding-v4", input: batch },
    });
    // The vendor's own error code is passed on (as for chat).
    const error = await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_request_error",
    });
    expect(error.message).toMatch(/^Batch part 1 of 3 \(inputs 0-9\) failed: /);
    const failing = (await sandboxLog()).filter((entry) =>
      (entry.body.input as string[] | undefined)?.includes(batch[3]!),
    );
    expect(failing).toHaveLength(1);
  });
});

describe("vec-* on Voyage", () => {
  it("maps dimensions to output_dimension and answers vectors of that size", async () => {
    const result = await client.embeddings.create({
      model: "vec-4",
      input: ["alpha beta", "gamma"],
      dimensions: 512,
    });
    expect(result.model).toBe("vec-4");
    expect(result.data.map((item) => item.embedding.length)).toEqual([512, 512]);
    expect(result.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const [call] = await sandboxLog();
    expect(call?.path).toBe("/voyage/v1/embeddings");
    expect(call?.body).toEqual({
      model: "voyage-4",
      input: ["alpha beta", "gamma"],
      output_dimension: 512,
    });
  });

  it("rejects dimensions 300 with a gateway-style 400 before any upstream call", async () => {
    const error = await client.embeddings
      .create({ model: "vec-4", input: "x", dimensions: 300 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: "invalid_parameter", param: "dimensions" });
    const raw = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "vec-4-lite", input: "x", dimensions: 300 },
    });
    const body = await expectGatewayError(raw, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "dimensions",
    });
    expect(body.message).toBe(
      "Invalid 'dimensions': model 'vec-4-lite' supports 256, 512, 1024, 2048; got 300.",
    );
    expect(await sandboxLog()).toEqual([]);
  });

  it("splits by the model's token cap (120K for vec-4-large)", async () => {
    const batch = Array.from({ length: 40 }, (_, i) => words(4_000, i));
    const response = await gateway.request("/v1/embeddings", {
      key: gateway.adminKey,
      json: { model: "vec-4-large", input: batch, dimensions: 256 },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: Array<{ index: number; embedding: number[] }>;
      usage: { total_tokens: number };
    };
    expect(body.data.map((item) => item.index)).toEqual(batch.map((_, i) => i));
    expect(body.usage.total_tokens).toBe(160_000);
    const calls = await sandboxLog();
    expect(calls.length).toBeGreaterThan(1);
    expect(Number(response.headers.get("x-switchyard-batch-parts"))).toBe(calls.length);
    for (const call of calls) {
      const tokens = (call.body.input as string[]).reduce(
        (sum, text) => sum + text.split(" ").length,
        0,
      );
      expect(tokens).toBeLessThanOrEqual(120_000);
    }
  });
});

describe("Gemini models", () => {
  it("embeds partner-embedding-001 with outputDimensionality, counting tokens for billing", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    const batch = [...texts(150, "gemini"), "Ünïcödé text, counted by the gateway"];
    const response = await gateway.request("/v1/embeddings", {
      key: user.key,
      json: { model: "partner-embedding-001", input: batch, dimensions: 768 },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: Array<{ embedding: number[] }>;
      usage: { prompt_tokens: number };
    };
    expect(body.data.every((item) => item.embedding.length === 768)).toBe(true);
    expect(norm(body.data[150]!.embedding)).toBeCloseTo(1, 5);
    let expected = 0;
    for (const text of batch) expected += await countTokens(text, { exact: true });
    expect(body.usage.prompt_tokens).toBe(expected);
    const calls = await sandboxLog();
    expect(calls.map((call) => (call.body.requests as unknown[]).length)).toEqual([100, 51]);
    expect(calls[0]?.path).toBe("/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect((calls[0]!.body.requests as Array<Record<string, unknown>>)[0]).toMatchObject({
      outputDimensionality: 768,
    });
    const [row] = await usageRows(user.key);
    expect(row).toMatchObject({ input_tokens: expected, usage_source: "estimated" });
    expect(row?.cost_micros).toBe(Number(response.headers.get("x-switchyard-cost-micros")));
  });

  it("serves text-embedding-004 (retired upstream) with gemini-embedding-001 at 768 and says so", async () => {
    const direct = await fetch(
      `${gateway.sandboxUrl}/gemini/v1beta/models/text-embedding-004:embedContent`,
      {
        method: "POST",
        headers: { "x-goog-api-key": "k", "content-type": "application/json" },
        body: JSON.stringify({ content: { parts: [{ text: "x" }] } }),
      },
    );
    expect(direct.status).toBe(404);
    await fetch(`${gateway.sandboxUrl}/__sandbox/reset`, { method: "POST" });

    const { data, response } = await client.embeddings
      .create({ model: "text-embedding-004", input: ["old model", "still served"] })
      .withResponse();
    expect(response.headers.get("x-switchyard-upstream-model")).toBe("gemini-embedding-001");
    expect(data.model).toBe("text-embedding-004");
    expect(data.data.map((item) => item.embedding.length)).toEqual([768, 768]);
    const calls = await sandboxLog();
    expect(calls.map((call) => call.path)).toEqual([
      "/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents",
    ]);
  });
});

describe("request validation", () => {
  const post = (json: unknown) =>
    gateway.request("/v1/embeddings", { key: gateway.adminKey, json });

  it("rejects empty input and empty strings", async () => {
    for (const [input, param] of [
      ["", "input"],
      [[], "input"],
      [["a", ""], "input[1]"],
    ] as const) {
      await expectGatewayError(await post({ model: "text-embedding-v4", input }), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param,
      });
    }
    await expectGatewayError(await post({ model: "text-embedding-v4" }), {
      status: 400,
      type: "invalid_request_error",
      code: "missing_parameter",
      param: "input",
    });
  });

  it("rejects token ids for text-only upstreams, bad formats, too many inputs and chat models", async () => {
    const tokenIds = await expectGatewayError(await post({ model: "vec-4", input: [[1, 2, 3]] }), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "input",
    });
    expect(tokenIds.message).toContain("does not accept token ids");
    await expectGatewayError(await post({ model: "vec-4", input: "x", encoding_format: "int8" }), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "encoding_format",
    });
    const tooMany = await expectGatewayError(await post({ model: "vec-4", input: texts(2049) }), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "input",
    });
    expect(tooMany.message).toBe("Invalid 'input': must have at most 2048 items.");
    const mixed = await expectGatewayError(await post({ model: "vec-4", input: ["a", 1] }), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "input",
    });
    expect(mixed.message).toContain("not a mix");
    await expectGatewayError(await post({ model: "gpt-4o-mini", input: "x" }), {
      status: 400,
      type: "invalid_request_error",
      code: "endpoint_model_mismatch",
      param: "model",
    });
    expect(await sandboxLog()).toEqual([]);
  });
});
