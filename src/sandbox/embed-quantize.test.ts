/** Voyage's quantized output types: ranges, lengths and the packed bits of the signs. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quantizedBase64, quantizeVector } from "./embed-quantize.ts";

const unitValues = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), {
  minLength: 8,
  maxLength: 64,
});

describe("quantizeVector", () => {
  it("keeps int8 and uint8 in range, one value per dimension", () => {
    fc.assert(
      fc.property(unitValues, (vector) => {
        const signed = quantizeVector(vector, "int8");
        const unsigned = quantizeVector(vector, "uint8");
        expect(signed).toHaveLength(vector.length);
        expect(unsigned).toHaveLength(vector.length);
        expect(signed.every((v) => Number.isInteger(v) && v >= -128 && v <= 127)).toBe(true);
        expect(unsigned.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)).toBe(true);
      }),
    );
  });

  it("packs the signs eight to a value, most significant bit first", () => {
    const vector = [0.5, -0.1, 0.2, 0.3, -0.9, -0.4, 0.1, -0.2];
    expect(quantizeVector(vector, "ubinary")).toEqual([0b10110010]);
    expect(quantizeVector(vector, "binary")).toEqual([0b10110010 - 128]);
    expect(quantizeBase64Bytes(quantizeVector(vector, "binary"))).toEqual([0b10110010]);
  });
});

function quantizeBase64Bytes(values: number[]): number[] {
  return [...Buffer.from(quantizedBase64(values, "binary"), "base64")];
}
