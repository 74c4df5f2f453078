import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { GeminiEmbeddingModel, normalizeVector } from "./gemini-embedding-model.ts";

let sandbox: RunningSandbox;
let http: HttpClient;
let model: GeminiEmbeddingModel;

beforeAll(async () => {
  sandbox = await startSandbox();
  http = createHttpClient();
  model = new GeminiEmbeddingModel({ baseUrl: `${sandbox.url}/gemini/v1beta`, apiKey: "g", http });
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});

interface Logged {
  path: string;
  headers: Record<string, string>;
  body: { requests: Array<Record<string, unknown>> };
}

async function lastRequest(): Promise<Logged> {
  const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=1`)).json()) as {
    requests: Logged[];
  };
  return log.requests[0]!;
}

const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe("GeminiEmbeddingModel", () => {
  it("calls batchEmbedContents with outputDimensionality and reports no tokens", async () => {
    const result = await model.doEmbed({
      upstreamModel: "gemini-embedding-001",
      inputs: ["a", "b"],
      dimensions: 768,
    });
    const request = await lastRequest();
    expect(request.path).toBe("/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(request.headers["x-goog-api-key"]).toBe("g");
    expect(request.body.requests[1]).toEqual({
      model: "models/gemini-embedding-001",
      content: { parts: [{ text: "b" }] },
      outputDimensionality: 768,
    });
    expect(model.maxInputsPerCall).toBe(100);
    expect(result.tokens).toBeUndefined();
    expect(result.embeddings.map((vector) => vector.length)).toEqual([768, 768]);
    expect(norm(result.embeddings[0]!)).toBeCloseTo(1, 6);
    expect(result.servedBy).toBe("gemini-embedding-001");
    expect(result.warnings).toEqual([]);
  });

  it("serves the retired text-embedding-004 by gemini-embedding-001 at 768", async () => {
    const result = await model.doEmbed({ upstreamModel: "text-embedding-004", inputs: ["x"] });
    const request = await lastRequest();
    expect(request.path).toBe("/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(request.body.requests[0]?.outputDimensionality).toBe(768);
    expect(result.servedBy).toBe("gemini-embedding-001");
    expect(result.warnings[0]).toMatchObject({ type: "compatibility", setting: "model" });
  });

  it("throws Google's status names, retryable or not", async () => {
    const overloaded = await model
      .doEmbed({ upstreamModel: "gemini-embedding-001", inputs: ["[[sandbox:status=503]]"] })
      .catch((caught: unknown) => caught);
    expect(overloaded).toMatchObject({ status: 503, vendorCode: "UNAVAILABLE", retryable: true });
    const tooMany = await model
      .doEmbed({
        upstreamModel: "gemini-embedding-001",
        inputs: Array.from({ length: 101 }, (_, i) => `t${i}`),
      })
      .catch((caught: unknown) => caught);
    expect(tooMany).toMatchObject({
      status: 400,
      vendorCode: "INVALID_ARGUMENT",
      retryable: false,
    });
    expect((tooMany as Error).message).toBe(
      "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch",
    );
  });

  it("normalizes only vectors that are not unit length", () => {
    expect(normalizeVector([3, 4])).toEqual([0.6, 0.8]);
    const unit = [0.6, 0.8];
    expect(normalizeVector(unit)).toBe(unit);
    expect(normalizeVector([0, 0])).toEqual([0, 0]);
  });
});
