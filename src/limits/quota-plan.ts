/**
 * @module limits/quota-plan
 * What both quota backends (in memory, Redis) agree on: the budgets a request is checked
 * against (the key's own and every ancestor's, each falling back to the `limits.default_*`
 * settings), the 429 each exhausted budget answers, and the rate-limit headers of an admitted
 * request (the tightest budget's), in OpenAI's header names.
 */
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { QuotaDefaults } from "./quota-limiter.ts";

/** The sliding window of `rpm` and `tpm`. */
export const WINDOW_MS = 60_000;

/** One budget a request spends: a key's limits, null where it has none. */
export interface QuotaHolder {
  id: string;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
}

/** The key's budget, then each ancestor's: a minted key spends its parents' budgets too. */
export function quotaChain(key: ApiKeyRecord, defaults: QuotaDefaults): QuotaHolder[] {
  const holder = (record: ApiKeyRecord): QuotaHolder => ({
    id: record.id,
    rpm: record.rpm ?? defaults.defaultRpm,
    tpm: record.tpm ?? defaults.defaultTpm ?? null,
    concurrency: record.concurrency ?? defaults.defaultConcurrency,
  });
  return [key, ...(key.ancestors ?? [])].map(holder);
}

export type QuotaKind = "requests" | "tokens" | "concurrency";

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The 429 of an exhausted budget; `resetMs` is when the window next has room. */
export function quotaExceeded(kind: QuotaKind, limit: number, resetMs: number): GatewayError {
  if (kind === "concurrency") {
    return new GatewayError(
      "concurrency_limited",
      {},
      { headers: { "retry-after": "1", "x-ratelimit-limit-concurrency": String(limit) } },
    );
  }
  const retryAfter = seconds(resetMs);
  return new GatewayError(
    kind === "requests" ? "rate_limited" : "token_rate_limited",
    {},
    {
      headers: {
        "retry-after": String(retryAfter),
        [`x-ratelimit-limit-${kind}`]: String(limit),
        [`x-ratelimit-remaining-${kind}`]: "0",
        [`x-ratelimit-reset-${kind}`]: `${retryAfter}s`,
      },
    },
  );
}

/** The tightest of several budgets of one kind, by what remains of it. */
export interface Tightest {
  limit: number;
  remaining: number;
  resetMs: number;
}

export function tighter(current: Tightest | undefined, next: Tightest): Tightest {
  return !current || next.remaining < current.remaining ? next : current;
}

/** Headers of an admitted request. */
export function admissionHeaders(budgets: {
  requests?: Tightest | undefined;
  tokens?: Tightest | undefined;
  concurrency?: number | undefined;
}): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ["requests", "tokens"] as const) {
    const budget = budgets[kind];
    if (!budget) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(budget.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(Math.max(0, budget.remaining));
    headers[`x-ratelimit-reset-${kind}`] = `${seconds(budget.resetMs)}s`;
  }
  if (budgets.concurrency !== undefined)
    headers["x-ratelimit-limit-concurrency"] = String(budgets.concurrency);
  return headers;
}
