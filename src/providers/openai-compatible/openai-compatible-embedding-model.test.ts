import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import { UpstreamError } from "../../spec/index.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { OpenAICompatibleEmbeddingModel } from "./openai-compatible-embedding-model.ts";
import { decodeFloat32Base64, readEmbeddingList } from "./openai-embedding-response.ts";

let sandbox: RunningSandbox;
let http: HttpClient;

beforeAll(async () => {
  sandbox = await startSandbox();
  http = createHttpClient();
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});

const dashscope = () =>
  new OpenAICompatibleEmbeddingModel({
    baseUrl: `${sandbox.url}/dashscope/compatible-mode/v1`,
    apiKey: "sk-test",
    http,
    upstreamModel: "text-embedding-v4",
    provider: "dashscope-compatible",
  });

async function lastBody(): Promise<Record<string, unknown>> {
  const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=1`)).json()) as {
    requests: Array<{ body: Record<string, unknown> }>;
  };
  return log.requests[0]?.body ?? {};
}

describe("OpenAICompatibleEmbeddingModel against DashScope compatible mode", () => {
  it("declares DashScope's limit of 10 inputs, OpenAI's for other models", () => {
    expect(dashscope().maxInputsPerCall).toBe(10);
    expect(dashscope().maxTokensPerCall).toBeUndefined();
    const other = new OpenAICompatibleEmbeddingModel({
      baseUrl: "http://x",
      apiKey: "",
      http,
      upstreamModel: "text-embedding-3-small",
    });
    expect([other.maxInputsPerCall, other.maxTokensPerCall]).toEqual([2048, 300_000]);
  });

  it("sends dimensions and float, reads vectors and prompt tokens", async () => {
    const result = await dashscope().doEmbed({
      upstreamModel: "text-embedding-v4",
      inputs: ["one two", "three"],
      dimensions: 512,
    });
    expect(await lastBody()).toEqual({
      model: "text-embedding-v4",
      input: ["one two", "three"],
      dimensions: 512,
      encoding_format: "float",
    });
    expect(result.embeddings).toHaveLength(2);
    expect(result.embeddings[0]).toHaveLength(512);
    expect(result.tokens).toBe(3);
    expect(result.servedBy).toBe("text-embedding-v4");
    expect(result.upstreamRequestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("reports undefined tokens when the upstream leaves usage out", async () => {
    const result = await dashscope().doEmbed({
      upstreamModel: "text-embedding-v4",
      inputs: ["x [[sandbox:no-usage]]"],
    });
    expect(result.tokens).toBeUndefined();
  });

  it("throws DashScope's batch error as a non-retryable UpstreamError", async () => {
    const error = await dashscope()
      .doEmbed({
        upstreamModel: "text-embedding-v4",
        inputs: Array.from({ length: 11 }, (_, i) => `t${i}`),
      })
      .catch((caught: unknown) => caught);
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 400, retryable: false, vendorCode: "InvalidParameter" });
    expect((error as UpstreamError).message).toContain("should not be larger than 10");
  });

  it("marks a 503 retryable and a cut body as a protocol error", async () => {
    const overloaded = await dashscope()
      .doEmbed({ upstreamModel: "text-embedding-v4", inputs: ["[[sandbox:status=503]]"] })
      .catch((caught: unknown) => caught);
    expect(overloaded).toMatchObject({ status: 503, retryable: true });
    const cut = await dashscope()
      .doEmbed({ upstreamModel: "text-embedding-v4", inputs: ["[[sandbox:malformed=0]]"] })
      .catch((caught: unknown) => caught);
    expect(cut).toMatchObject({ kind: "protocol" });
  });
});

describe("readEmbeddingList", () => {
  it("orders by index and decodes base64", () => {
    const base64 = Buffer.from(new Float32Array([0.5, -1]).buffer).toString("base64");
    expect(decodeFloat32Base64(base64)).toEqual([0.5, -1]);
    const list = readEmbeddingList(
      {
        data: [
          { index: 1, embedding: base64 },
          { index: 0, embedding: [1, 2] },
        ],
      },
      2,
    );
    expect(list).toEqual([
      [1, 2],
      [0.5, -1],
    ]);
  });

  it("rejects wrong counts and duplicate indexes", () => {
    expect(() => readEmbeddingList({ data: [] }, 1)).toThrow(/0 embeddings for 1/);
    expect(() =>
      readEmbeddingList(
        {
          data: [
            { index: 0, embedding: [1] },
            { index: 0, embedding: [2] },
          ],
        },
        2,
      ),
    ).toThrow(/invalid embedding/);
  });
});
