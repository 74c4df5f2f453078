import { describe, expect, it } from "vitest";
import { convertResponsesUsage } from "./openai-responses-passthrough.ts";

describe("the Responses API's usage", () => {
  it("reads the Responses usage object", () => {
    expect(
      convertResponsesUsage({
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 17,
      }),
    ).toMatchObject({
      input: { total: 10, cacheRead: 4, cacheWrite: 0 },
      output: { total: 7, reasoning: 3 },
      source: "upstream",
    });
    expect(convertResponsesUsage(null)).toBeUndefined();
  });
});
