import { describe, expect, it } from "vitest";
import {
  decodeFloat32Base64,
  encodeEmbedding,
  encodeFloat32Base64,
  fitDimensions,
} from "./encode-embedding.ts";

describe("encodeFloat32Base64", () => {
  it("writes little-endian float32", () => {
    expect(encodeFloat32Base64([1, -2])).toBe(
      Buffer.from([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]).toString("base64"),
    );
    expect(encodeFloat32Base64([])).toBe("");
  });

  it("round-trips float32 values exactly and rounds doubles to float32", () => {
    const values = [0.5, -0.25, Math.fround(0.1), Math.fround(3.4e38)];
    expect(decodeFloat32Base64(encodeFloat32Base64(values))).toEqual(values);
    expect(decodeFloat32Base64(encodeFloat32Base64([0.1]))).toEqual([Math.fround(0.1)]);
  });

  it("is what the openai package decodes", () => {
    const vector = [0.125, -0.5, Math.fround(0.3333)];
    const text = encodeFloat32Base64(vector);
    const bytes = Buffer.from(text, "base64");
    // The SDK's own decoding: a Float32Array over the bytes (see openai/internal/utils/base64).
    const copy = new Uint8Array(bytes);
    expect(Array.from(new Float32Array(copy.buffer))).toEqual(vector);
  });
});

describe("encodeEmbedding", () => {
  it("keeps floats as they are and encodes base64 on request", () => {
    expect(encodeEmbedding([1, 2], "float")).toEqual([1, 2]);
    expect(encodeEmbedding([1, 2], "base64")).toBe(encodeFloat32Base64([1, 2]));
  });
});

describe("fitDimensions", () => {
  it("leaves vectors at or below the size alone", () => {
    const vector = [0.6, 0.8];
    expect(fitDimensions(vector, 2)).toBe(vector);
    expect(fitDimensions(vector, undefined)).toBe(vector);
    expect(fitDimensions(vector, 4)).toBe(vector);
  });

  it("truncates and renormalizes longer vectors", () => {
    expect(fitDimensions([3, 4, 12], 2)).toEqual([0.6, 0.8]);
    expect(fitDimensions([0, 0, 1], 2)).toEqual([0, 0]);
  });
});
