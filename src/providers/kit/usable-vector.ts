/**
 * @module providers/kit/usable-vector
 * What an embedding vector from a vendor must be before it is delivered and billed: one or more
 * finite numbers. `1e400` is valid JSON that parses to Infinity, and NaN can hide in a base64
 * float; a client can use neither.
 */

/** A vector a client can use: one or more finite numbers (no NaN, no infinity). */
export function usableVector(values: unknown): values is number[] {
  return (
    Array.isArray(values) &&
    values.length > 0 &&
    values.every((value) => typeof value === "number" && Number.isFinite(value))
  );
}
