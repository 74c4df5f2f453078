import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddingVector, float32Base64 } from "./embed-vectors.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

function embed(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sandbox.url}/voyage/v1/embeddings`, {
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function detail(response: Response, status: number): Promise<string> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { detail: string };
  expect(Object.keys(body)).toEqual(["detail"]);
  return body.detail;
}

const words = (count: number) => Array.from({ length: count }, () => "w").join(" ");

describe("Voyage embeddings", () => {
  it("answers the list shape with total_tokens only, output_dimension honoured", async () => {
    const response = await embed({ model: "voyage-4", input: ["a b", "c"], output_dimension: 256 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: Array<{ embedding: number[]; index: number }>;
      model: string;
      usage: Record<string, number>;
    };
    expect(body.model).toBe("voyage-4");
    expect(body.usage).toEqual({ total_tokens: 3 });
    expect(body.data[0]?.embedding).toEqual(embeddingVector("voyage-4", "a b", 256));
    expect(body.data[1]?.index).toBe(1);
  });

  it("defaults to 1024 and encodes base64 on request", async () => {
    const body = (await (
      await embed({ model: "voyage-4-lite", input: "x", encoding_format: "base64" })
    ).json()) as { data: Array<{ embedding: string }> };
    expect(body.data[0]?.embedding).toBe(
      float32Base64(embeddingVector("voyage-4-lite", "x", 1024)),
    );
  });

  it("rejects dimensions, bad output_dimension, unknown models and bad keys", async () => {
    expect(await detail(await embed({ model: "voyage-4", input: "x", dimensions: 256 }), 400)).toBe(
      "Argument 'dimensions' is not supported",
    );
    expect(
      await detail(await embed({ model: "voyage-4", input: "x", output_dimension: 300 }), 400),
    ).toContain("output_dimension");
    expect(await detail(await embed({ model: "voyage-9", input: "x" }), 400)).toContain(
      "not supported",
    );
    expect(
      await detail(await embed({ model: "voyage-4", input: "x" }, { authorization: "" }), 401),
    ).toBe("Provided API key is invalid.");
    expect(await detail(await embed("{not json"), 400)).toMatch(/JSON/i);
  });

  it("caps the batch at 1,000 inputs and the tokens per model", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `t${i}`);
    expect(await detail(await embed({ model: "voyage-4", input: many }), 400)).toContain(
      "The max allowed batch size is 1000",
    );
    const big = Array.from({ length: 5 }, () => words(25_000));
    expect(await detail(await embed({ model: "voyage-4-large", input: big }), 400)).toBe(
      "Request to model 'voyage-4-large' failed. The max allowed tokens per submitted batch is 120000. Your batch has 125000 tokens after truncation. Please lower the number of tokens in the batch.",
    );
    expect((await embed({ model: "voyage-4", input: big, output_dimension: 256 })).status).toBe(
      200,
    );
    const long = await embed({ model: "voyage-4", input: [words(32_001)], truncation: false });
    expect(await detail(long, 400)).toContain("context length");
  });

  it("injects faults with Voyage's detail body", async () => {
    const response = await embed({
      model: "voyage-4",
      input: ["ok", "[[sandbox:status=429;retry-after=1]]"],
    });
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await detail(response, 429)).toContain("rate limit");
  });
});
