import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../catalog/index.ts";
import type { BillingStore, UsageRecord } from "../store/index.ts";
import { createLedgerBilling } from "./billing-service.ts";

const model = {
  id: "m",
  pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
} as unknown as CatalogModel;

/** A store that refuses closings while `down` (the database away) and records what it wrote. */
function flakyStore() {
  const state = { down: false, written: [] as Array<{ kind: string; requestId: string }> };
  const refuse = () => Promise.reject(new Error("database unavailable"));
  const store = {
    placeHold: async () => ({ placed: true as const }),
    settle: (record: UsageRecord) => {
      if (state.down) return refuse();
      state.written.push({ kind: "charge", requestId: record.requestId });
      return Promise.resolve({ alreadySettled: false, ownClosing: true });
    },
    releaseHold: (record: UsageRecord) => {
      if (state.down) return refuse();
      state.written.push({ kind: "release", requestId: record.requestId });
      return Promise.resolve();
    },
    recordInflight: async () => {},
    checkpoint: async () => {},
  } as unknown as BillingStore;
  return { store, state };
}

const input = (requestId: string) => ({
  requestId,
  accountId: "acct",
  keyId: "key",
  model,
  endpoint: "/v1/chat/completions",
  estimateMicros: 1_000,
});
const usage = {
  tokens: {
    input: { total: 10, cacheRead: 0, cacheWrite: 0 },
    output: { total: 20, reasoning: 0 },
    source: "upstream" as const,
  },
};

describe("ledger billing: closings the store refused", () => {
  it("writes a refused settlement again once the store answers (a stream that was delivered)", async () => {
    const { store, state } = flakyStore();
    let now = 0;
    const billing = createLedgerBilling(store, { instanceId: "i", clock: () => now });
    const reservation = await billing.reserve(input("req_stream"));
    state.down = true;
    await expect(reservation.settle(usage)).rejects.toThrow(/unavailable/);
    now += 2_000;
    expect(await billing.retryUnwritten()).toBe(0);
    state.down = false;
    expect(await billing.retryUnwritten()).toBe(1);
    expect(state.written).toEqual([{ kind: "charge", requestId: "req_stream" }]);
    expect(await billing.retryUnwritten()).toBe(0);
  });

  it("replaces a refused settlement by the release that follows it (an answer never delivered)", async () => {
    const { store, state } = flakyStore();
    let now = 0;
    const billing = createLedgerBilling(store, { instanceId: "i", clock: () => now });
    const reservation = await billing.reserve(input("req_json"));
    state.down = true;
    await expect(reservation.settle(usage)).rejects.toThrow(/unavailable/);
    state.down = false;
    // A sweep right after the refusal leaves the settlement alone...
    now += 500;
    expect(await billing.retryUnwritten()).toBe(0);
    state.down = true;
    // ...and the release of the failed answer replaces it.
    await expect(reservation.release("request failed")).rejects.toThrow(/unavailable/);
    state.down = false;
    now += 2_000;
    expect(await billing.retryUnwritten()).toBe(1);
    expect(state.written).toEqual([{ kind: "release", requestId: "req_json" }]);
  });

  it("does not release a request whose settlement was written", async () => {
    const { store, state } = flakyStore();
    const billing = createLedgerBilling(store, { instanceId: "i" });
    const reservation = await billing.reserve(input("req_ok"));
    await reservation.settle(usage);
    await reservation.release("late");
    expect(state.written).toEqual([{ kind: "charge", requestId: "req_ok" }]);
    expect(await billing.retryUnwritten()).toBe(0);
  });
});
