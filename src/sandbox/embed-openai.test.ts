import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { float32Base64 } from "./embed-vectors.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

const PATH = "/dashscope/compatible-mode/v1/embeddings";

function embed(
  body: unknown,
  options: { path?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${sandbox.url}${options.path ?? PATH}`, {
    method: "POST",
    headers: {
      authorization: "Bearer sk-test",
      "content-type": "application/json",
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
}

interface EmbeddingList {
  object: string;
  data: Array<{ object: string; index: number; embedding: number[] | string }>;
  model: string;
  usage?: { prompt_tokens: number; total_tokens: number };
  id?: string;
}

describe("DashScope compatible-mode embeddings", () => {
  it("answers the OpenAI shape with id and usage, 1024 floats by default", async () => {
    const response = await embed({ model: "text-embedding-v4", input: ["a b", "c"] });
    expect(response.status).toBe(200);
    const body = (await response.json()) as EmbeddingList;
    expect(body).toMatchObject({
      object: "list",
      model: "text-embedding-v4",
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.data.map((item) => [item.object, item.index])).toEqual([
      ["embedding", 0],
      ["embedding", 1],
    ]);
    expect(body.data[0]?.embedding).toHaveLength(1024);
  });

  it("gives the same text the same vector, of the requested size", async () => {
    const one = (await (
      await embed({ model: "text-embedding-v4", input: "same", dimensions: 256 })
    ).json()) as EmbeddingList;
    const batch = (await (
      await embed({ model: "text-embedding-v4", input: ["other", "same"], dimensions: 256 })
    ).json()) as EmbeddingList;
    expect(one.data[0]?.embedding).toHaveLength(256);
    expect(batch.data[1]?.embedding).toEqual(one.data[0]?.embedding);
    expect(batch.data[0]?.embedding).not.toEqual(one.data[0]?.embedding);
  });

  it("rejects 11 inputs with DashScope's exact 400 body", async () => {
    const response = await embed({
      model: "text-embedding-v4",
      input: Array.from({ length: 11 }, (_, i) => `t${i}`),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: unknown; id: string; request_id: string };
    expect(body.error).toEqual({
      code: "InvalidParameter",
      param: null,
      message:
        "<400> InternalError.Algo.InvalidParameter: Value error, batch size is invalid, it should not be larger than 10.: input.contents",
      type: "InvalidParameter",
    });
    expect(body.id).toBe(body.request_id);
  });

  it("rejects sizes, base64, empty strings and unknown models", async () => {
    const size = await embed({ model: "text-embedding-v4", input: "x", dimensions: 300 });
    expect(size.status).toBe(400);
    expect(JSON.stringify(await size.json())).toContain("dimension is invalid");
    const base64 = await embed({
      model: "text-embedding-v4",
      input: "x",
      encoding_format: "base64",
    });
    expect(base64.status).toBe(400);
    expect((await embed({ model: "text-embedding-v4", input: ["x", ""] })).status).toBe(400);
    expect((await embed({ model: "nope", input: "x" })).status).toBe(404);
    expect(
      (await embed({ model: "text-embedding-v4", input: "x" }, { headers: { authorization: "" } }))
        .status,
    ).toBe(401);
  });

  it("serves OpenAI models with base64 under the OpenAI prefix", async () => {
    const path = "/openai/v1/embeddings";
    const floats = (await (
      await embed({ model: "text-embedding-3-small", input: "hi", dimensions: 8 }, { path })
    ).json()) as EmbeddingList;
    const base64 = (await (
      await embed(
        { model: "text-embedding-3-small", input: "hi", dimensions: 8, encoding_format: "base64" },
        { path },
      )
    ).json()) as EmbeddingList;
    expect(base64.data[0]?.embedding).toBe(float32Base64(floats.data[0]?.embedding as number[]));
    expect(floats.id).toBeUndefined();
  });
});

describe("faults on embeddings", () => {
  it("injects a status from a directive in one input", async () => {
    const response = await embed({
      model: "text-embedding-v4",
      input: ["ok", "[[sandbox:status=503]] bad"],
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "service_unavailable",
    );
  });

  it("honours fail-times, no-usage, malformed and drop", async () => {
    const headers = { "x-sandbox-fault": "fail-times=1;status=429", "x-sandbox-fault-key": "emb" };
    expect((await embed({ model: "text-embedding-v4", input: "x" }, { headers })).status).toBe(429);
    expect((await embed({ model: "text-embedding-v4", input: "x" }, { headers })).status).toBe(200);
    const bare = (await (
      await embed({ model: "text-embedding-v4", input: "x [[sandbox:no-usage]]" })
    ).json()) as EmbeddingList;
    expect(bare.usage).toBeUndefined();
    const cut = await embed({ model: "text-embedding-v4", input: "x [[sandbox:malformed=0]]" });
    await expect(cut.json()).rejects.toThrow();
    await expect(
      embed({ model: "text-embedding-v4", input: "[[sandbox:drop=0]]" }),
    ).rejects.toThrow();
  });

  it("logs the request for /__sandbox/requests", async () => {
    await embed({ model: "text-embedding-v4", input: ["a", "b"] });
    const log = (await (await fetch(`${sandbox.url}/__sandbox/requests`)).json()) as {
      requests: Array<{ path: string; body: { input: string[] } }>;
    };
    expect(log.requests.at(-1)).toMatchObject({ path: PATH, body: { input: ["a", "b"] } });
  });
});
