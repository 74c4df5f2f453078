/**
 * @module test/support/usage-record
 * A settled chat request's usage record for store-level tests: one input and one output token,
 * charged `costMicros` at `createdAt`.
 */
import type { UsageRecord } from "../../src/store/index.ts";

export function chatUsageRecord(fields: {
  requestId: string;
  accountId: string;
  keyId: string | null;
  costMicros: number;
  createdAt: number;
  heldMicros?: number;
}): UsageRecord {
  return {
    model: "gpt-4o-mini",
    endpoint: "/v1/chat/completions",
    status: "succeeded",
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: 0,
    characters: 0,
    heldMicros: 0,
    usageSource: "upstream",
    upstreamRequestId: null,
    latencyMs: 1,
    ttfbMs: 1,
    breakdown: {},
    ...fields,
  };
}
