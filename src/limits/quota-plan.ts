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
  /** 0 for the calling key, 1 for its parent, and so on. */
  depth: number;
  /** The limits that come from the `limits.default_*` settings rather than the key. */
  defaulted: { rpm: boolean; tpm: boolean; concurrency: boolean };
}

/** The key's budget, then each ancestor's: a minted key spends its parents' budgets too. */
export function quotaChain(key: ApiKeyRecord, defaults: QuotaDefaults): QuotaHolder[] {
  const holder = (record: ApiKeyRecord, depth: number): QuotaHolder => ({
    id: record.id,
    rpm: record.rpm ?? defaults.defaultRpm,
    tpm: record.tpm ?? defaults.defaultTpm ?? null,
    concurrency: record.concurrency ?? defaults.defaultConcurrency,
    depth,
    defaulted: {
      rpm: record.rpm === null,
      tpm: record.tpm === null,
      concurrency: record.concurrency === null,
    },
  });
  return [key, ...(key.ancestors ?? [])].map((record, depth) => holder(record, depth));
}

export type QuotaKind = "requests" | "tokens" | "concurrency";

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

const SETTINGS = { requests: "rpm", tokens: "tpm", concurrency: "concurrency" } as const;

/**
 * The 429 of an exhausted budget; `resetMs` is when the window next has room. The message
 * says which limit (rpm, tpm, concurrency) of which key (this one, its parent, a key above it)
 * refused, and whether the limit is the gateway's default; so do the `x-switchyard-limit-*`
 * headers.
 */
export function quotaExceeded(
  kind: QuotaKind,
  limit: number,
  resetMs: number,
  holder: Pick<QuotaHolder, "id" | "depth" | "defaulted">,
): GatewayError {
  const setting = SETTINGS[kind];
  const retryAfter = kind === "concurrency" ? 1 : seconds(resetMs);
  const params = {
    holder:
      holder.depth === 0
        ? "this key"
        : `${holder.depth === 1 ? "its parent key" : "the key above it"} ${holder.id}`,
    limit,
    origin: holder.defaulted[setting] ? ` (the gateway default, limits.default_${setting})` : "",
    retry_after: retryAfter,
  };
  const which = {
    "x-switchyard-limit": setting,
    "x-switchyard-limit-key": holder.id,
    "x-switchyard-limit-scope": holder.depth === 0 ? "key" : "ancestor_key",
  };
  if (kind === "concurrency") {
    return new GatewayError("concurrency_limited", params, {
      headers: { "retry-after": "1", "x-ratelimit-limit-concurrency": String(limit), ...which },
    });
  }
  return new GatewayError(kind === "requests" ? "rate_limited" : "token_rate_limited", params, {
    headers: {
      "retry-after": String(retryAfter),
      [`x-ratelimit-limit-${kind}`]: String(limit),
      [`x-ratelimit-remaining-${kind}`]: "0",
      [`x-ratelimit-reset-${kind}`]: `${retryAfter}s`,
      ...which,
    },
  });
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
