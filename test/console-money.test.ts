/**
 * The console's money formatter: integer micro-USD to text with integer math only, and typed
 * amounts back to micro-units, exactly.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatCount,
  formatMicros,
  formatSignedMicros,
  parseAmount,
} from "../console/src/money.ts";

describe("formatMicros", () => {
  it.each([
    [0, "0.00 USD"],
    [1, "0.000001 USD"],
    [10, "0.00001 USD"],
    [123, "0.000123 USD"],
    [500_000, "0.50 USD"],
    [1_000_000, "1.00 USD"],
    [1_500_000, "1.50 USD"],
    [1_234_567, "1.234567 USD"],
    [100_000_000, "100.00 USD"],
    [1_234_567_890_000, "1,234,567.89 USD"],
    [-250_000, "-0.25 USD"],
    [-1, "-0.000001 USD"],
  ])("%d micros → %s", (micros, text) => {
    expect(formatMicros(micros)).toBe(text);
  });

  it("keeps every digit of amounts beyond what a float holds exactly", () => {
    expect(formatMicros(Number.MAX_SAFE_INTEGER)).toBe("9,007,199,254.740991 USD");
    expect(formatMicros(123_456_789_012_345_678_901n)).toBe("123,456,789,012,345.678901 USD");
    expect(formatMicros("900719925474099312")).toBe("900,719,925,474.099312 USD");
  });

  it("does not show the float rounding of 0.1 + 0.2", () => {
    expect(formatMicros(100_000 + 200_000)).toBe("0.30 USD");
  });

  it("names the currency given, and honours a minimum of fraction digits", () => {
    expect(formatMicros(2_000_000, "EUR")).toBe("2.00 EUR");
    expect(formatMicros(2_000_000, "USD", { minDigits: 0 })).toBe("2 USD");
    expect(formatMicros(2_000_000, "USD", { minDigits: 6 })).toBe("2.000000 USD");
  });

  it("refuses what is not an integer amount", () => {
    expect(() => formatMicros(1.5)).toThrow(RangeError);
    expect(() => formatMicros(Number.NaN)).toThrow(RangeError);
    expect(() => formatMicros("1.5")).toThrow(RangeError);
    expect(() => formatMicros(2 ** 60)).toThrow(RangeError);
  });

  it("signs ledger amounts", () => {
    expect(formatSignedMicros(2_500_000)).toBe("+2.50 USD");
    expect(formatSignedMicros(-40)).toBe("-0.00004 USD");
    expect(formatSignedMicros(0)).toBe("0.00 USD");
  });

  it("counts with separators", () => {
    expect(formatCount(1_234_567)).toBe("1,234,567");
    expect(formatCount(0)).toBe("0");
  });
});

describe("parseAmount", () => {
  it.each([
    ["12", 12_000_000n],
    ["0.5", 500_000n],
    [".25", 250_000n],
    ["1,000.000001", 1_000_000_001n],
    ["-3.1", -3_100_000n],
    ["0.1", 100_000n],
  ])("%s → %d", (text, micros) => {
    expect(parseAmount(text)).toBe(micros);
  });

  it.each(["", ".", "abc", "1.0000001", "1e3", "1.2.3", "--1"])("refuses %j", (text) => {
    expect(parseAmount(text)).toBeUndefined();
  });

  it("reads back exactly what formatMicros wrote, for any amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (micros) => {
        const text = formatMicros(micros).replace(/ USD$/, "");
        expect(parseAmount(text)).toBe(micros);
      }),
    );
  });
});
