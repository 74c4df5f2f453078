/**
 * @module billing/spend-limits
 * Key spend caps (docs/budgets.md): which caps a request is held under (its key's and every
 * ancestor's: a minted key spends its parents' budgets too), where their periods start and end
 * (UTC days; weeks start on Monday 00:00; months on the 1st), and the 402 a cap refuses with.
 * The check itself runs in the store, in the transaction that places the hold.
 */
import { GatewayError } from "../errors/index.ts";
import type {
  ApiKeyRecord,
  SpendLimitCheck,
  SpendLimitPeriod,
  SpendLimitRefusal,
} from "../store/index.ts";

/** One key's cap, as the key describes it. */
export interface KeySpendLimit {
  keyId: string;
  limitMicros: number;
  /** null: the key's lifetime. */
  period: SpendLimitPeriod | null;
  /** 0 for the calling key, 1 for its parent, and so on. */
  depth: number;
}

const DAY_MS = 86_400_000;

/** Unix ms at which the period holding `now` started (0 for a lifetime). */
export function periodStart(period: SpendLimitPeriod | null, now: number): number {
  if (period === null) return 0;
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  if (period === "daily") return day;
  if (period === "weekly") {
    // 1970-01-01 was a Thursday: (weekday + 6) % 7 days back is the Monday.
    const weekday = new Date(day).getUTCDay();
    return day - ((weekday + 6) % 7) * DAY_MS;
  }
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** Unix ms at which the period holding `now` ends and the next starts (undefined: never). */
export function periodEnd(period: SpendLimitPeriod | null, now: number): number | undefined {
  if (period === null) return undefined;
  const start = periodStart(period, now);
  if (period === "daily") return start + DAY_MS;
  if (period === "weekly") return start + 7 * DAY_MS;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The caps a request of `key` is held under: the key's own, then its ancestors'. */
export function spendLimitsOf(key: ApiKeyRecord): KeySpendLimit[] {
  const limits: KeySpendLimit[] = [];
  [key, ...(key.ancestors ?? [])].forEach((record, depth) => {
    if (record.spendLimitMicros === null || record.spendLimitMicros === undefined) return;
    limits.push({
      keyId: record.id,
      limitMicros: record.spendLimitMicros,
      period: record.spendLimitPeriod ?? null,
      depth,
    });
  });
  return limits;
}

/** The caps with the start of their current period, for the store's check. */
export function spendLimitChecks(limits: readonly KeySpendLimit[], now: number): SpendLimitCheck[] {
  return limits.map((limit) => ({
    keyId: limit.keyId,
    limitMicros: limit.limitMicros,
    since: periodStart(limit.period, now),
  }));
}

/** `$5.00`, `$0.0125`: dollars with at least two decimals and no trailing zeros beyond. */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(micros));
  const dollars = Math.floor(abs / 1_000_000);
  const fraction = String(abs % 1_000_000)
    .padStart(6, "0")
    .replace(/0{1,4}$/, (zeros) => zeros.slice(0, Math.max(0, zeros.length - 4)));
  return `${sign}$${dollars.toLocaleString("en-US")}.${fraction.padEnd(2, "0")}`;
}

/** An ISO time without milliseconds: `2026-11-28T00:00:00Z`. */
export function isoSeconds(millis: number): string {
  return new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The 402 of a hold that `refusal`'s cap had no room for. */
export function spendLimitReached(
  refusal: SpendLimitRefusal,
  limits: readonly KeySpendLimit[],
  requiredMicros: number,
  now: number,
): GatewayError {
  const limit = limits.find((entry) => entry.keyId === refusal.keyId);
  const period = limit?.period ?? null;
  const depth = limit?.depth ?? 0;
  const resetsAt = periodEnd(period, now);
  const periodName = period ?? "lifetime";
  const subject =
    depth === 0
      ? `This key's ${periodName} spend limit`
      : `The ${periodName} spend limit of ${depth === 1 ? "its parent key" : "the key above it"} ${refusal.keyId}`;
  const reset =
    resetsAt === undefined
      ? "it does not reset (a lifetime limit)"
      : `it resets at ${isoSeconds(resetsAt)}`;
  const used = refusal.spentMicros + refusal.heldMicros;
  return new GatewayError(
    "key_spend_limit_reached",
    {
      subject,
      limit: formatUsd(refusal.limitMicros),
      reset,
      used: formatUsd(used),
      required: formatUsd(requiredMicros),
    },
    {
      headers: {
        "x-switchyard-spend-limit-key": refusal.keyId,
        "x-switchyard-spend-limit-micros": String(refusal.limitMicros),
        "x-switchyard-spend-limit-period": periodName,
        "x-switchyard-spend-limit-remaining-micros": String(
          Math.max(0, refusal.limitMicros - used),
        ),
        ...(resetsAt === undefined
          ? {}
          : {
              "x-switchyard-spend-limit-reset": isoSeconds(resetsAt),
              "retry-after": String(Math.max(1, Math.ceil((resetsAt - now) / 1000))),
            }),
      },
    },
  );
}

/** What a `key_spend_limit_reached` refusal left under its cap (micro-USD), else undefined. */
export function spendLimitRoom(error: GatewayError): number | undefined {
  if (error.code !== "key_spend_limit_reached") return undefined;
  const room = Number(error.headers["x-switchyard-spend-limit-remaining-micros"]);
  return Number.isFinite(room) ? room : undefined;
}
