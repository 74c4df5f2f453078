import { describe, expect, it } from "vitest";
import { clientKey, createAttemptLimiter } from "./attempt-limiter.ts";

const MINUTE = 60_000;

function limiter(maxEntries: number, clock: { time: number }) {
  return createAttemptLimiter({
    perAddress: {
      login: { limit: 5, windowMs: MINUTE },
      register: { limit: 2, windowMs: 60 * MINUTE },
      redeem: { limit: 2, windowMs: MINUTE },
    },
    perEmail: {
      login: { limit: 3, windowMs: MINUTE },
      register: { limit: null, windowMs: 60 * MINUTE },
      redeem: { limit: 2, windowMs: MINUTE },
    },
    maxEntries,
    now: () => clock.time,
  });
}

describe("attempt limiter", () => {
  it("stays within its entry bound while an attacker cycles addresses and emails", () => {
    const clock = { time: 0 };
    const attempts = limiter(1000, clock);
    for (let i = 0; i < 50_000; i++) {
      clock.time += 1;
      attempts.attempt("login", `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, `${i}@x.co`);
      expect(attempts.size()).toBeLessThanOrEqual(1000);
    }
  });

  it("forgets buckets that have filled up again", () => {
    const clock = { time: 0 };
    const window = { limit: 1000, windowMs: MINUTE };
    const attempts = createAttemptLimiter({
      perAddress: { login: window, register: window, redeem: window },
      perEmail: { login: window, register: window, redeem: window },
      maxEntries: 1000,
      now: () => clock.time,
    });
    for (let i = 0; i < 100; i++) attempts.attempt("login", `10.0.0.${i}`, `${i}@x.co`);
    expect(attempts.size()).toBe(200);
    clock.time += MINUTE;
    for (let i = 0; i < 100; i++) attempts.attempt("login", "10.1.0.1", "steady@y.co");
    expect(attempts.size()).toBe(2);
  });

  it("refills at the limit's rate and counts nothing when it refuses", () => {
    const clock = { time: 0 };
    const attempts = limiter(1000, clock);
    for (let i = 0; i < 3; i++) attempts.attempt("login", "10.0.0.1", "v@x.co");
    expect(() => attempts.attempt("login", "10.0.0.1", "v@x.co")).toThrow(/retry in 20 seconds/);
    // The refused attempt took no token from the address: two are left there.
    attempts.attempt("login", "10.0.0.1", "other@x.co");
    attempts.attempt("login", "10.0.0.1", "third@x.co");
    expect(() => attempts.attempt("login", "10.0.0.1", "fourth@x.co")).toThrow(/login attempts/);
    clock.time += 20_000;
    attempts.attempt("login", "10.0.0.2", "V@X.CO");
    expect(() => attempts.attempt("login", "10.0.0.3", "v@x.co")).toThrow();
  });

  it("keys IPv6 clients by their /64 and IPv4-mapped addresses as IPv4", () => {
    expect(clientKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:DB8:0001:0002:ffff::1%eth0")).toBe("2001:db8:1:2::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(clientKey("192.0.2.7")).toBe("192.0.2.7");
    expect(clientKey("not an address")).toBe("not an address");
  });
});
