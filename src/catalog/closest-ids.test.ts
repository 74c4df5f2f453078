import { describe, expect, it } from "vitest";
import { closestIds, editDistance } from "./closest-ids.ts";

const IDS = [
  "claude-haiku-4-5",
  "claude-haiku-4-5-20251001",
  "claude-opus-4-1",
  "claude-opus-4-6",
  "claude-sonnet-4-0",
  "claude-sonnet-4-5",
  "claude-sonnet-4-5-20250929",
  "claude-sonnet-4-6",
  "gpt-4o",
  "gpt-4o-mini",
  "gemini-2.5-flash",
];

describe("closestIds", () => {
  it("offers the nearest versions of a newer Claude id, newest first, once per date", () => {
    expect(closestIds("claude-sonnet-4-7", IDS)).toEqual([
      "claude-sonnet-4-6",
      "claude-sonnet-4-5",
      "claude-sonnet-4-0",
    ]);
    expect(closestIds("claude-haiku-4-6-20260301", IDS)[0]).toBe("claude-haiku-4-5");
  });

  it("catches typos and offers nothing for a name unlike any id", () => {
    expect(closestIds("gpt-4o-mni", IDS)[0]).toBe("gpt-4o-mini");
    expect(closestIds("gemini-2.5-flsh", IDS)).toEqual(["gemini-2.5-flash"]);
    expect(closestIds("whisper", IDS)).toEqual([]);
    expect(closestIds("x".repeat(10_000), IDS)).toEqual([]);
  });

  it("measures edit distance", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("same", "same")).toBe(0);
  });
});
