/**
 * @module sandbox/embed-quantize
 * Voyage's `output_dtype` (pure): a unit-length float vector as `int8` (−128…127), `uint8`
 * (0…255), or bit-packed signs, one value per 8 dimensions (`ubinary` 0…255, `binary` the same
 * bits as offset int8, −128…127).
 */
import { float32Base64 } from "./embed-vectors.ts";

export type VoyageDtype = "float" | "int8" | "uint8" | "binary" | "ubinary";

export const VOYAGE_DTYPES: readonly VoyageDtype[] = [
  "float",
  "int8",
  "uint8",
  "binary",
  "ubinary",
];

const clamp = (value: number, low: number, high: number) =>
  Math.min(high, Math.max(low, Math.round(value)));

/** The vector in `dtype`; integer types as integers, binary types `vector.length / 8` long. */
export function quantizeVector(vector: readonly number[], dtype: VoyageDtype): number[] {
  switch (dtype) {
    case "float":
      return [...vector];
    case "int8":
      return vector.map((value) => clamp(value * 127, -128, 127));
    case "uint8":
      return vector.map((value) => clamp((value + 1) * 127.5, 0, 255));
    case "binary":
    case "ubinary": {
      const packed: number[] = [];
      for (let start = 0; start < vector.length; start += 8) {
        let byte = 0;
        for (let bit = 0; bit < 8; bit++)
          byte = (byte << 1) | ((vector[start + bit] ?? 0) > 0 ? 1 : 0);
        packed.push(dtype === "ubinary" ? byte : byte - 128);
      }
      return packed;
    }
  }
}

/** The values as base64: float32 little-endian for floats, one byte each otherwise (binary: the packed bits). */
export function quantizedBase64(values: readonly number[], dtype: VoyageDtype): string {
  if (dtype === "float") return float32Base64([...values]);
  // int8 as two's complement; binary's offset values back to their packed bits.
  const byte = (value: number) =>
    dtype === "binary" ? value + 128 : dtype === "int8" && value < 0 ? value + 256 : value;
  return Buffer.from(values.map(byte)).toString("base64");
}
