import { describe, expect, it } from "vitest";
import {
  DEFAULT_WEBHOOK_SCHEDULE,
  nextAttemptAt,
  nextAttemptDelayMs,
  shouldGiveUp,
  type WebhookRetrySchedule,
} from "./webhook-schedule.ts";

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const noJitter = () => 0;

describe("nextAttemptDelayMs", () => {
  it("grows threefold from 10 s and stays at one hour once it gets there", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 30, 1000].map((attempts) =>
      nextAttemptDelayMs(attempts, DEFAULT_WEBHOOK_SCHEDULE, noJitter),
    );
    expect(delays).toEqual([
      10 * SECOND,
      30 * SECOND,
      90 * SECOND,
      270 * SECOND,
      810 * SECOND,
      2430 * SECOND,
      HOUR,
      HOUR,
      HOUR,
      HOUR,
    ]);
  });

  it("shortens each delay by at most a tenth, never lengthens it past the cap", () => {
    for (const attempts of [1, 4, 7, 20]) {
      const full = nextAttemptDelayMs(attempts, DEFAULT_WEBHOOK_SCHEDULE, noJitter);
      const shortest = nextAttemptDelayMs(attempts, DEFAULT_WEBHOOK_SCHEDULE, () => 0.999999);
      expect(shortest).toBeLessThan(full);
      expect(shortest).toBeGreaterThanOrEqual(full * 0.9);
      for (let i = 0; i < 100; i++) {
        const delay = nextAttemptDelayMs(attempts);
        expect(delay).toBeGreaterThanOrEqual(shortest);
        expect(delay).toBeLessThanOrEqual(Math.min(full, HOUR));
      }
    }
  });

  it("takes a schedule in milliseconds (what tests use)", () => {
    const fast: WebhookRetrySchedule = {
      baseDelayMs: 5,
      factor: 2,
      maxDelayMs: 30,
      jitter: 0,
      giveUpAfterMs: 200,
    };
    expect([1, 2, 3, 4, 5].map((attempts) => nextAttemptDelayMs(attempts, fast))).toEqual([
      5, 10, 20, 30, 30,
    ]);
  });

  it("refuses an attempt count below one", () => {
    expect(() => nextAttemptDelayMs(0)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1.5)).toThrow(RangeError);
  });
});

describe("giving up", () => {
  const first = Date.UTC(2026, 0, 1);

  it("stops only past 24 hours after the first attempt", () => {
    expect(shouldGiveUp(first, first + 24 * HOUR)).toBe(false);
    expect(shouldGiveUp(first, first + 24 * HOUR + 1)).toBe(true);
  });

  it("plans attempts until the next one would fall past the window: about 30 in a day", () => {
    let now = first;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(first, attempts, now, DEFAULT_WEBHOOK_SCHEDULE, noJitter);
      if (next === null) break;
      expect(next - first).toBeLessThanOrEqual(24 * HOUR);
      now = next;
      attempts += 1;
    }
    expect(attempts).toBe(29);
    expect(now - first).toBeGreaterThan(23 * HOUR);
  });
});
