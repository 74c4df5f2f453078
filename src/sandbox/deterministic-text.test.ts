import { describe, expect, it } from "vitest";
import {
  countTokens,
  groupTokens,
  hexId,
  pickWords,
  seededRandom,
  splitWords,
  stableHash,
  tokenize,
  WORDS,
} from "./deterministic-text.ts";

describe("stableHash", () => {
  it("is 32-bit FNV-1a", () => {
    expect(stableHash("")).toBe(0x811c9dc5);
    expect(stableHash("a")).toBe(0xe40c292c);
    expect(stableHash("foobar")).toBe(0xbf9cf968);
  });
});

describe("seededRandom and pickWords", () => {
  it("repeat for a seed and differ across seeds", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    for (const value of first) expect(value >= 0 && value < 1).toBe(true);
    expect(pickWords(7, 10)).toEqual(pickWords(7, 10));
    expect(pickWords(7, 10)).not.toEqual(pickWords(8, 10));
    expect(pickWords(7, 10)).toHaveLength(10);
    for (const word of pickWords(123, 50)) expect(WORDS).toContain(word);
    expect(pickWords(7, 0)).toEqual([]);
  });

  it("hexId gives stable lowercase hex of the asked length", () => {
    expect(hexId(1, 24)).toMatch(/^[0-9a-f]{24}$/);
    expect(hexId(1, 24)).toBe(hexId(1, 24));
    expect(hexId(1, 24)).not.toBe(hexId(2, 24));
  });
});

describe("tokenize", () => {
  it("keeps leading whitespace on each token and round-trips the text", () => {
    expect(tokenize("Hello  big\nworld")).toEqual(["Hello", "  big", "\nworld"]);
    expect(tokenize("Hello  big\nworld").join("")).toBe("Hello  big\nworld");
    expect(tokenize("")).toEqual([]);
    expect(countTokens("one two three")).toBe(3);
    expect(countTokens('{"answer":"a b"}')).toBe(2);
    expect(splitWords("  a  b ")).toEqual(["a", "b"]);
  });

  it("splits as the pattern \\s*\\S+ did, in linear time", () => {
    const samples = ["", " ", "a", "  a b\t\n c  ", "\u00a0x\u2028y\ufeffz ", "x".repeat(50)];
    for (const text of samples) {
      expect(tokenize(text)).toEqual(text.match(/\s*\S+/g) ?? []);
      expect(countTokens(text)).toBe((text.match(/\s*\S+/g) ?? []).length);
    }
    const started = performance.now();
    expect(countTokens(" ".repeat(400_000))).toBe(0);
    expect(tokenize(`${" \t".repeat(200_000)}end`)).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("groupTokens chunks tokens in order", () => {
    expect(groupTokens(["a", " b", " c", " d", " e"], 2)).toEqual(["a b", " c d", " e"]);
    expect(groupTokens([], 3)).toEqual([]);
  });
});
