import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../store/index.ts";
import { createMemoryQuotas } from "./memory-quotas.ts";
import type { QuotaLease } from "./quota-limiter.ts";

function apiKey(id: string, limits: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id, rpm: null, tpm: null, concurrency: null, ...limits } as ApiKeyRecord;
}

const TTL = 1_000;

/** Quotas with only the keys' own limits, on a clock the test moves. */
function quotasOn(clock: () => number) {
  return createMemoryQuotas({
    defaultRpm: null,
    defaultConcurrency: null,
    leaseTtlMs: TTL,
    now: clock,
  });
}

describe("in-memory concurrency leases", () => {
  it("count exactly the leases neither released nor expired, whatever the order of events", async () => {
    const step = fc.oneof(
      fc.constant({ kind: "acquire" as const }),
      fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant("wait" as const),
        ms: fc.oneof(fc.integer({ min: 0, max: 700 }), fc.constantFrom(1, TTL - 1, TTL)),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        let clock = 0;
        const quotas = quotasOn(() => clock);
        const key = apiKey("key_a", { concurrency: 1_000 });
        const open: Array<{ lease: QuotaLease; expiresAt: number; released: boolean }> = [];
        for (const [index, each] of steps.entries()) {
          if (each.kind === "acquire") {
            const lease = await quotas.acquire(key, `r${index}`);
            open.push({ lease, expiresAt: clock + TTL, released: false });
          } else if (each.kind === "release" && open.length > 0) {
            const chosen = open[each.pick % open.length]!;
            chosen.lease.release();
            chosen.released = true;
          } else if (each.kind === "wait") clock += each.ms;
          const expected = open.filter((l) => !l.released && l.expiresAt > clock).length;
          expect(quotas.inFlight("key_a")).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("refuses past the limit and admits again once a lease is released or has expired", async () => {
    let clock = 0;
    const quotas = quotasOn(() => clock);
    const key = apiKey("key_b", { concurrency: 2 });
    const first = await quotas.acquire(key, "r1");
    await quotas.acquire(key, "r2");
    await expect(quotas.acquire(key, "r3")).rejects.toMatchObject({ code: "concurrency_limited" });
    first.release();
    await quotas.acquire(key, "r4");
    await expect(quotas.acquire(key, "r5")).rejects.toMatchObject({ code: "concurrency_limited" });
    clock += TTL;
    // Every lease taken at time 0 has expired: both slots are free again.
    await quotas.acquire(key, "r6");
    await quotas.acquire(key, "r7");
    expect(quotas.inFlight("key_b")).toBe(2);
  });
});
