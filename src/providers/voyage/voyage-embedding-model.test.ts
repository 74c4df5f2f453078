import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { readVoyageErrorFields, VoyageEmbeddingModel } from "./voyage-embedding-model.ts";

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

const voyage = (upstreamModel: string) =>
  new VoyageEmbeddingModel({
    baseUrl: `${sandbox.url}/voyage/v1`,
    apiKey: "vk",
    http,
    upstreamModel,
  });

describe("VoyageEmbeddingModel", () => {
  it("declares 1,000 inputs and the model's token cap", () => {
    expect(voyage("voyage-4-large").maxInputsPerCall).toBe(1000);
    expect(voyage("voyage-4-large").maxTokensPerCall).toBe(120_000);
    expect(voyage("voyage-4").maxTokensPerCall).toBe(320_000);
    expect(voyage("voyage-4-lite").maxTokensPerCall).toBe(1_000_000);
    expect(voyage("voyage-future").maxTokensPerCall).toBe(120_000);
  });

  it("maps dimensions to output_dimension and reads total_tokens", async () => {
    const result = await voyage("voyage-4").doEmbed({
      upstreamModel: "voyage-4",
      inputs: ["a b c", "d"],
      dimensions: 2048,
    });
    const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=1`)).json()) as {
      requests: Array<{ body: Record<string, unknown> }>;
    };
    expect(log.requests[0]?.body).toEqual({
      model: "voyage-4",
      input: ["a b c", "d"],
      output_dimension: 2048,
    });
    expect(result.embeddings.map((vector) => vector.length)).toEqual([2048, 2048]);
    expect(result.tokens).toBe(4);
    expect(result.upstreamRequestId).toMatch(/^[0-9a-f]{24}$/);
  });

  it("passes Voyage's detail through as the error message", async () => {
    const error = await voyage("voyage-4")
      .doEmbed({ upstreamModel: "voyage-4", inputs: ["x"], dimensions: 300 })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).toContain("output_dimension");
  });

  it("reads string and list details", () => {
    expect(readVoyageErrorFields({ detail: "bad" })).toEqual({ message: "bad" });
    expect(readVoyageErrorFields({ detail: [{ msg: "a" }, { msg: "b" }] })).toEqual({
      message: "a; b",
    });
    expect(readVoyageErrorFields({})).toEqual({});
  });
});
