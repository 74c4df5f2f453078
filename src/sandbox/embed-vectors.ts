/**
 * @module sandbox/embed-vectors
 * Deterministic embedding vectors (pure): a unit-length vector that is a function of the model,
 * the text and the requested size. The components come from a generator seeded by the model and
 * the text, so a shorter vector is the renormalized prefix of a longer one (as with Matryoshka
 * truncation). Every component is a float32 value, so a vector survives the trip through
 * base64 float32 unchanged.
 */
import { seededRandom, stableHash } from "./deterministic-text.ts";

/** A unit-length vector of `dimensions` float32 components for this model and text. */
export function embeddingVector(model: string, text: string, dimensions: number): number[] {
  // Two hashes mixed, so texts that collide in one 32-bit hash still differ.
  const seed = stableHash(`${model}\u0000${text}`) ^ Math.imul(stableHash(text), 0x9e3779b1);
  const next = seededRandom(seed);
  const raw: number[] = [];
  let sumOfSquares = 0;
  for (let i = 0; i < dimensions; i++) {
    const value = next() * 2 - 1;
    raw.push(value);
    sumOfSquares += value * value;
  }
  const norm = Math.sqrt(sumOfSquares) || 1;
  return raw.map((value) => Math.fround(value / norm));
}

/** Little-endian float32 bytes of a vector, base64 encoded (OpenAI's `encoding_format: base64`). */
export function float32Base64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => {
    bytes.writeFloatLE(value, index * 4);
  });
  return bytes.toString("base64");
}

/** The sandbox's token count of an embedding input: one token per word, at least one. */
export function embeddingTokens(text: string): number {
  const words = text.match(/\S+/g);
  return Math.max(1, words?.length ?? 0);
}
