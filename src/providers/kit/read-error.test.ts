import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./read-error.ts";

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates, and nothing else", () => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0);
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Sun, 22 Nov 2026 12:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Sun, 22 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
