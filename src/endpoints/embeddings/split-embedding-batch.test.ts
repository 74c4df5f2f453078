import { describe, expect, it } from "vitest";
import { splitEmbeddingBatch } from "./split-embedding-batch.ts";

const ranges = (parts: ReturnType<typeof splitEmbeddingBatch>) =>
  parts.map((part) => [part.start, part.end]);

describe("splitEmbeddingBatch", () => {
  it("splits 250 inputs into 25 parts of 10, in order", () => {
    const parts = splitEmbeddingBatch(new Array(250).fill(1), { maxInputs: 10 });
    expect(parts).toHaveLength(25);
    expect(parts[0]).toEqual({ index: 0, start: 0, end: 10, tokens: 10 });
    expect(parts[24]).toEqual({ index: 24, start: 240, end: 250, tokens: 10 });
    expect(parts.every((part, i) => part.index === i && part.end - part.start === 10)).toBe(true);
  });

  it("keeps a batch within the limits in one part, and returns none for no inputs", () => {
    expect(ranges(splitEmbeddingBatch([5, 5, 5], { maxInputs: 100, maxTokens: 15 }))).toEqual([
      [0, 3],
    ]);
    expect(splitEmbeddingBatch([], { maxInputs: 10 })).toEqual([]);
  });

  it("closes a part before the token cap is crossed", () => {
    const parts = splitEmbeddingBatch([40, 40, 40, 10, 90], { maxInputs: 100, maxTokens: 100 });
    expect(ranges(parts)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    expect(parts.map((part) => part.tokens)).toEqual([80, 50, 90]);
  });

  it("gives an input above the token cap a part of its own", () => {
    expect(ranges(splitEmbeddingBatch([10, 500, 10], { maxInputs: 10, maxTokens: 100 }))).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
  });

  it("applies both limits together, and treats a limit below 1 as 1", () => {
    expect(ranges(splitEmbeddingBatch([1, 1, 1, 50, 50], { maxInputs: 2, maxTokens: 60 }))).toEqual(
      [
        [0, 2],
        [2, 4],
        [4, 5],
      ],
    );
    expect(splitEmbeddingBatch([1, 1], { maxInputs: 0 })).toHaveLength(2);
  });
});
