import { describe, expect, it } from "vitest";
import { findFaultDirective, parseFaultSpec, selectFaultSource } from "./faults.ts";

describe("parseFaultSpec", () => {
  it("parses every supported key", () => {
    const result = parseFaultSpec(
      "status=429; retry-after=1.5;delay=200;chunk-delay=50;drop=3;malformed=2;hang;no-usage;words=5;fail-times=2",
    );
    expect(result).toEqual({
      ok: true,
      fault: {
        status: 429,
        retryAfter: "1.5",
        delayMs: 200,
        chunkDelayMs: 50,
        dropAfter: 3,
        malformedAfter: 2,
        hang: true,
        noUsage: true,
        words: 5,
        failTimes: 2,
      },
    });
  });

  it("returns the neutral spec for an empty string", () => {
    expect(parseFaultSpec("")).toEqual({ ok: true, fault: { hang: false, noUsage: false } });
    expect(parseFaultSpec(" ; ")).toEqual({ ok: true, fault: { hang: false, noUsage: false } });
  });

  it("rejects unknown keys and bad values", () => {
    expect(parseFaultSpec("stauts=503")).toEqual({
      ok: false,
      message: "unknown sandbox fault 'stauts'",
    });
    expect(parseFaultSpec("status=200").ok).toBe(false);
    expect(parseFaultSpec("status=abc").ok).toBe(false);
    expect(parseFaultSpec("delay=-1").ok).toBe(false);
    expect(parseFaultSpec("delay=1.5").ok).toBe(false);
    expect(parseFaultSpec("words").ok).toBe(false);
    expect(parseFaultSpec("hang=yes").ok).toBe(false);
    expect(parseFaultSpec("retry-after=soon").ok).toBe(false);
  });
});

describe("fault sources", () => {
  it("finds the last directive in the texts", () => {
    expect(findFaultDirective(["hi", "please [[sandbox:status=503]] now"])).toBe("status=503");
    expect(findFaultDirective(["[[sandbox:delay=1]]", "x [[sandbox: words=3 ]]"])).toBe("words=3");
    expect(findFaultDirective(["no directive [[other:x]]"])).toBeUndefined();
  });

  it("prefers a non-empty header over directives", () => {
    const texts = ["[[sandbox:status=500]]"];
    expect(selectFaultSource("words=3", texts)).toEqual({ spec: "words=3", origin: "header" });
    expect(selectFaultSource("  ", texts)).toEqual({ spec: "status=500", origin: "directive" });
    expect(selectFaultSource(undefined, ["plain"])).toBeUndefined();
  });
});
