/**
 * @module endpoints/embeddings/encode-embedding
 * The wire forms of a vector (pure): OpenAI's `encoding_format: "base64"` is the vector's
 * little-endian float32 bytes, base64 encoded (what the official `openai` package asks for by
 * default and decodes with a `Float32Array`); `float` is the JSON array. Also fits a vector that
 * came back longer than asked to the requested size (truncate, then renormalize).
 */
import { toUnitLength } from "../../spec/index.ts";

export type EncodingFormat = "float" | "base64";

/** Little-endian float32 bytes of the vector, base64 encoded. */
export function encodeFloat32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes.toString("base64");
}

/** The inverse of {@link encodeFloat32Base64}. */
export function decodeFloat32Base64(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const vector: number[] = [];
  for (let offset = 0; offset + 4 <= bytes.length; offset += 4)
    vector.push(bytes.readFloatLE(offset));
  return vector;
}

export function encodeEmbedding(vector: number[], format: EncodingFormat): number[] | string {
  return format === "base64" ? encodeFloat32Base64(vector) : vector;
}

/**
 * The vector at `dimensions` components: unchanged when it is not longer, else its prefix
 * scaled back to unit length (Matryoshka truncation, as the vendors do it).
 */
export function fitDimensions(vector: number[], dimensions: number | undefined): number[] {
  if (dimensions === undefined || vector.length <= dimensions) return vector;
  return toUnitLength(vector.slice(0, dimensions));
}
