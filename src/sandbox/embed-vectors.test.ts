import { describe, expect, it } from "vitest";
import { embeddingTokens, embeddingVector, float32Base64 } from "./embed-vectors.ts";

const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe("embeddingVector", () => {
  it("is unit length, of the requested size, and deterministic", () => {
    const vector = embeddingVector("m", "hello world", 1024);
    expect(vector).toHaveLength(1024);
    expect(norm(vector)).toBeCloseTo(1, 6);
    expect(embeddingVector("m", "hello world", 1024)).toEqual(vector);
  });

  it("differs by text and by model", () => {
    const a = embeddingVector("m", "alpha", 64);
    expect(embeddingVector("m", "beta", 64)).not.toEqual(a);
    expect(embeddingVector("other", "alpha", 64)).not.toEqual(a);
  });

  it("makes a shorter vector the renormalized prefix of a longer one", () => {
    const long = embeddingVector("m", "text", 256);
    const short = embeddingVector("m", "text", 64);
    const prefixNorm = norm(long.slice(0, 64));
    short.forEach((value, index) => {
      expect(value).toBeCloseTo((long[index] ?? 0) / prefixNorm, 6);
    });
  });

  it("holds only float32 values", () => {
    for (const value of embeddingVector("m", "x", 32)) expect(Math.fround(value)).toBe(value);
  });
});

describe("float32Base64", () => {
  it("encodes little-endian float32 that decodes to the same numbers", () => {
    const vector = embeddingVector("m", "round trip", 16);
    const bytes = Buffer.from(float32Base64(vector), "base64");
    expect(bytes).toHaveLength(64);
    const decoded = Array.from({ length: 16 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(vector);
    expect(float32Base64([1])).toBe(Buffer.from([0, 0, 0x80, 0x3f]).toString("base64"));
  });
});

describe("embeddingTokens", () => {
  it("counts words, at least one", () => {
    expect(embeddingTokens("one two  three")).toBe(3);
    expect(embeddingTokens("   ")).toBe(1);
  });
});
