import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddingVector } from "./embed-vectors.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

function call(model: string, method: string, body: unknown, key = "k"): Promise<Response> {
  return fetch(`${sandbox.url}/gemini/v1beta/models/${model}:${method}`, {
    method: "POST",
    headers: { "x-goog-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const request = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "models/gemini-embedding-001",
  content: { parts: [{ text }] },
  ...extra,
});

describe("Gemini embeddings", () => {
  it("embeds one content with 3072 values by default, and no usage", async () => {
    const response = await call("gemini-embedding-001", "embedContent", request("hello"));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { embedding: { values: number[] } };
    expect(Object.keys(body)).toEqual(["embedding"]);
    expect(body.embedding.values).toEqual(embeddingVector("gemini-embedding-001", "hello", 3072));
  });

  it("embeds a batch in request order with outputDimensionality", async () => {
    const response = await call("gemini-embedding-001", "batchEmbedContents", {
      requests: [
        request("a", { outputDimensionality: 768, taskType: "RETRIEVAL_DOCUMENT" }),
        request("b", { outputDimensionality: 768 }),
      ],
    });
    const body = (await response.json()) as { embeddings: Array<{ values: number[] }> };
    expect(Object.keys(body)).toEqual(["embeddings"]);
    expect(body.embeddings.map((item) => item.values)).toEqual([
      embeddingVector("gemini-embedding-001", "a", 768),
      embeddingVector("gemini-embedding-001", "b", 768),
    ]);
  });

  it("allows at most 100 requests in one batch, with Google's exact message", async () => {
    const response = await call("gemini-embedding-001", "batchEmbedContents", {
      requests: Array.from({ length: 101 }, (_, i) => request(`t${i}`)),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: 400,
        message: "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch",
        status: "INVALID_ARGUMENT",
      },
    });
  });

  it("answers the exact 404 for the retired text-embedding-004", async () => {
    for (const method of ["embedContent", "batchEmbedContents"]) {
      const response = await call("text-embedding-004", method, { requests: [request("x")] });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: {
          code: 404,
          message:
            "models/text-embedding-004 is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.",
          status: "NOT_FOUND",
        },
      });
    }
  });

  it("validates sizes, task types, inner models, empty texts and the key", async () => {
    const cases: unknown[] = [
      request("x", { outputDimensionality: 64 }),
      request("x", { taskType: "GUESS" }),
      { ...request("x"), model: "models/gemini-embedding-2-preview" },
      request(""),
    ];
    for (const body of cases) {
      const response = await call("gemini-embedding-001", "embedContent", body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { status: string } }).error.status).toBe(
        "INVALID_ARGUMENT",
      );
    }
    expect((await call("gemini-embedding-001", "embedContent", request("x"), "")).status).toBe(400);
  });

  it("injects faults found in any request's text", async () => {
    const response = await call("gemini-embedding-001", "batchEmbedContents", {
      requests: [request("fine"), request("[[sandbox:status=503]]")],
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { status: string } }).error.status).toBe(
      "UNAVAILABLE",
    );
  });
});
