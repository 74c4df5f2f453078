import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import { estimateEmbeddingCost } from "./estimate-embedding-cost.ts";
import type { EmbeddingRequest } from "./schema.ts";
import {
  inputTexts,
  isTokenInput,
  validateEmbeddingRequest,
} from "./validate-embedding-request.ts";

const model = {
  id: "vec-4",
  endpoint: "embedding",
  family: "vec",
  display_name: "Vec 4",
  owned_by: "voyageai",
  capabilities: { dimensions: [2048, 256, 1024, 512], default_dimensions: 1024 },
  pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
  routes: [],
  resolvedRoutes: [],
  missingCredentials: [],
} as CatalogModel;

function failure(body: Partial<EmbeddingRequest>): GatewayError {
  try {
    validateEmbeddingRequest({ model: "vec-4", input: "x", ...body } as EmbeddingRequest, model);
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a GatewayError");
}

describe("validateEmbeddingRequest", () => {
  it("accepts text and the catalog's sizes", () => {
    const valid = (body: Partial<EmbeddingRequest>) => () =>
      validateEmbeddingRequest({ model: "vec-4", input: "x", ...body } as EmbeddingRequest, model);
    expect(valid({ input: ["a", "b"], dimensions: 512 })).not.toThrow();
    expect(valid({ input: "a" })).not.toThrow();
  });

  it("rejects empty input and empty strings, naming the field", () => {
    expect(failure({ input: "" })).toMatchObject({
      code: "invalid_parameter",
      param: "input",
      message: "Invalid 'input': must not be empty.",
    });
    expect(failure({ input: ["a", "b", ""] })).toMatchObject({
      param: "input[2]",
      message: "Invalid 'input[2]': must not be an empty string.",
    });
  });

  it("rejects sizes the model does not list, listing the allowed ones", () => {
    expect(failure({ dimensions: 300 })).toMatchObject({
      status: 400,
      param: "dimensions",
      message: "Invalid 'dimensions': model 'vec-4' supports 256, 512, 1024, 2048; got 300.",
    });
  });

  it("rejects token ids (no catalog upstream takes them) and mixed arrays", () => {
    expect(failure({ input: [1, 2, 3] }).message).toContain("does not accept token ids");
    expect(failure({ input: [[1], [2]] }).message).toContain("does not accept token ids");
    expect(failure({ input: ["a", 1] as unknown as string[] }).message).toContain("not a mix");
  });
});

describe("input helpers", () => {
  it("turns a string into a batch of one and tells token input apart", () => {
    expect(inputTexts("a")).toEqual(["a"]);
    expect(inputTexts(["a", "b"])).toEqual(["a", "b"]);
    expect(isTokenInput(["a"])).toBe(false);
    expect(isTokenInput([1, 2])).toBe(true);
    expect(isTokenInput([[1, 2]])).toBe(true);
  });
});

describe("estimateEmbeddingCost", () => {
  it("holds the counted tokens with a 25% margin plus one per input, at the input price", async () => {
    // Short texts are bounded by their byte length: 5 + 1 ("\n") + 3 = 9.
    const priced = await estimateEmbeddingCost({ model: "vec-4", input: ["hello", "abc"] }, model);
    expect(priced.lineItems).toEqual([
      {
        item: "input",
        units: Math.ceil(9 * 1.25) + 2,
        unitPriceMicros: 1_000_000,
        per: 1_000_000,
        costMicros: 14,
      },
    ]);
    expect(priced.costMicros).toBe(14);
  });

  it("counts token ids as themselves", async () => {
    const single = await estimateEmbeddingCost({ model: "vec-4", input: [1, 2, 3, 4] }, model);
    expect(single.costMicros).toBe(Math.ceil(4 * 1.25) + 1);
    const many = await estimateEmbeddingCost({ model: "vec-4", input: [[1, 2], [3]] }, model);
    expect(many.costMicros).toBe(Math.ceil(3 * 1.25) + 2);
  });
});
