import { describe, expect, it } from "vitest";
import {
  DIRECTIVE_SCAN_CHARS,
  findFaultDirective,
  INTEGER_FAULTS,
  MAX_SPEC_LENGTH,
  parseFaultSpec,
  selectFaultSource,
  stripDirectives,
} from "./faults.ts";

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

describe("fault bounds", () => {
  it("accepts each integer fault up to its maximum and refuses one more", () => {
    for (const [key, { field, max }] of Object.entries(INTEGER_FAULTS)) {
      const ok = parseFaultSpec(`${key}=${max}`);
      expect(ok.ok && ok.fault[field]).toBe(max);
      expect(parseFaultSpec(`${key}=${max + 1}`)).toEqual({
        ok: false,
        message: `fault '${key}' must be an integer 0-${max}`,
      });
    }
    expect(parseFaultSpec(`words=${"9".repeat(400)}`).ok).toBe(false);
  });

  it("bounds delays, retry-after, codes and the spec itself", () => {
    expect(INTEGER_FAULTS.delay.max).toBe(600_000);
    expect(INTEGER_FAULTS["chunk-delay"].max).toBe(60_000);
    expect(INTEGER_FAULTS.words.max).toBe(1_000_000);
    expect(parseFaultSpec("retry-after=3600").ok).toBe(true);
    expect(parseFaultSpec("retry-after=3600.5").ok).toBe(false);
    expect(parseFaultSpec(`code=${"A".repeat(64)}`).ok).toBe(true);
    expect(parseFaultSpec(`code=${"A".repeat(65)}`).ok).toBe(false);
    const long = `no-usage;${" ".repeat(MAX_SPEC_LENGTH)}`;
    expect(parseFaultSpec(long)).toEqual({
      ok: false,
      message: `fault spec is longer than ${MAX_SPEC_LENGTH} characters`,
    });
  });
});

describe("directive scanning", () => {
  const within = (ms: number, run: () => unknown) => {
    const started = performance.now();
    const result = run();
    expect(performance.now() - started).toBeLessThan(ms);
    return result;
  };

  it("handles 400 KB of repeated openings in milliseconds", () => {
    const openings = "[[sandbox:".repeat(40_000);
    expect(within(100, () => findFaultDirective([openings]))).toBeUndefined();
    const unclosed = "[[sandbox:x]".repeat(34_000);
    expect(within(100, () => findFaultDirective([unclosed]))).toBeUndefined();
    const many = "[[sandbox:words=3]]".repeat(21_000);
    expect(within(100, () => findFaultDirective([many]))).toBe("words=3");
    expect(within(100, () => stripDirectives(openings))).toBe(openings);
  });

  it("matches what the directive pattern matched", () => {
    const pattern = /\[\[sandbox:([^\]]*)\]\]/g;
    const samples = [
      "a [[sandbox:words=2]] b [[sandbox:status=500]]",
      "[[sandbox:[[sandbox:drop=1]]",
      "[[sandbox:x]y]] [[sandbox:hang]]",
      "[[sandbox:words=1]] [[sandbox:no-usage",
      "]] [[sandbox:]] [[sandbox:a]]]",
      "[[[sandbox:delay=5]]]",
    ];
    for (const text of samples) {
      const expected = [...text.matchAll(pattern)].at(-1)?.[1]?.trim();
      expect(findFaultDirective([text]), text).toBe(expected);
      expect(stripDirectives(text), text).toBe(text.replace(pattern, " "));
    }
  });

  it("searches only the first part of very long texts", () => {
    const filler = "x".repeat(DIRECTIVE_SCAN_CHARS);
    expect(findFaultDirective(["[[sandbox:words=1]]", `${filler}[[sandbox:words=2]]`])).toBe(
      "words=1",
    );
    expect(findFaultDirective([`${filler}[[sandbox:words=2]]`])).toBeUndefined();
  });
});
