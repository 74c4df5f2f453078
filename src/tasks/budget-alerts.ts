/**
 * @module tasks/budget-alerts
 * Soft limits (docs/budgets.md): after a charge, an account with a monthly budget has its
 * month's spend compared with `budgets.alert_thresholds`; each threshold reached alerts once
 * per month — a `warn` log line and, when the account set a budget webhook, a signed
 * `budget.threshold_reached` event through the webhook dispatcher the video tasks use. Which
 * instance alerts is decided by the store (`claimBudgetAlert`: one row per account, month and
 * threshold). Soft limits never refuse a request. Delivery is retried in this process on the
 * webhook schedule; an instance that stops mid-way loses the retries, not the log line.
 */
import type { Logger } from "pino";
import { periodEnd, periodStart } from "../billing/index.ts";
import type { AccountBudget, BudgetStore, TaskStore } from "../store/index.ts";
import type { WebhookDispatcher } from "./video-engine.ts";

export const BUDGET_EVENT = "budget.threshold_reached";

/** How long an account's budget settings are kept before being read again. */
const BUDGET_CACHE_MS = 10_000;

export interface BudgetAlerts {
  /** A charge was written: checks the account's thresholds soon (never throws). */
  charged(charge: { accountId: string; costMicros: number }): void;
  /** Checks the account's thresholds now; resolves once the alerts due are claimed and logged. */
  check(accountId: string): Promise<void>;
  /** The account's budget changed: read it again on the next check. */
  forget(accountId: string): void;
  /** Resolves when every check and delivery started so far has finished (tests). */
  idle(): Promise<void>;
  stop(): void;
}

/** Basis points of a threshold fraction (0.8 → 8000), the integer the store keys alerts by. */
export function thresholdBasisPoints(fraction: number): number {
  return Math.round(fraction * 10_000);
}

export function createBudgetAlerts(deps: {
  store: BudgetStore & Pick<TaskStore, "webhookSecret">;
  webhooks: WebhookDispatcher;
  logger: Logger;
  clock: () => number;
  thresholds: () => readonly number[];
}): BudgetAlerts {
  const budgets = new Map<string, { budget: AccountBudget | undefined; until: number }>();
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const pending = new Set<Promise<unknown>>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const track = <T>(work: Promise<T>): Promise<T> => {
    pending.add(work);
    void work.finally(() => pending.delete(work)).catch(() => {});
    return work;
  };

  async function budgetOf(accountId: string): Promise<AccountBudget | undefined> {
    const now = deps.clock();
    const cached = budgets.get(accountId);
    if (cached && cached.until > now) return cached.budget;
    const budget = await deps.store.findAccountBudget(accountId);
    budgets.set(accountId, { budget, until: now + BUDGET_CACHE_MS });
    return budget;
  }

  async function deliver(
    budget: AccountBudget,
    url: string,
    event: { id: string; body: string },
    firstAt: number,
    attempt: number,
  ): Promise<void> {
    if (stopped) return;
    const secret = await deps.store.webhookSecret(budget.accountId, deps.webhooks.newSecret);
    const result = await deps.webhooks.deliver({
      url,
      body: event.body,
      secret,
      eventId: event.id,
    });
    if (result.ok) return;
    const now = deps.clock();
    if (deps.webhooks.givesUp(firstAt, now)) {
      deps.logger.warn(
        {
          accountId: budget.accountId,
          eventId: event.id,
          status: result.status,
          err: result.error,
        },
        "budget webhook not delivered; giving up",
      );
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void track(deliver(budget, url, event, firstAt, attempt + 1)).catch(() => {});
    }, deps.webhooks.retryDelayMs(attempt));
    timer.unref();
    timers.add(timer);
  }

  async function checkOnce(accountId: string): Promise<void> {
    const budget = await budgetOf(accountId);
    if (!budget || budget.monthlyBudgetMicros <= 0) return;
    const now = deps.clock();
    const since = periodStart("monthly", now);
    const spent = await deps.store.accountSpend(accountId, since);
    const thresholds = [...new Set(deps.thresholds().map(thresholdBasisPoints))].sort(
      (a, b) => a - b,
    );
    for (const bp of thresholds) {
      if (spent * 10_000 < bp * budget.monthlyBudgetMicros) break;
      const claimed = await deps.store.claimBudgetAlert({
        accountId,
        periodStart: since,
        thresholdBp: bp,
        spentMicros: spent,
        budgetMicros: budget.monthlyBudgetMicros,
      });
      if (!claimed) continue;
      const threshold = bp / 10_000;
      deps.logger.warn(
        {
          accountId,
          threshold,
          spentMicros: spent,
          monthlyBudgetMicros: budget.monthlyBudgetMicros,
        },
        `account ${accountId} reached ${bp / 100}% of its monthly budget`,
      );
      if (!budget.webhookUrl) continue;
      const id = `evt_budget_${accountId}_${since}_${bp}`;
      const body = JSON.stringify({
        id,
        object: "event",
        type: BUDGET_EVENT,
        created_at: new Date(now).toISOString(),
        data: {
          account_id: accountId,
          threshold,
          monthly_budget_micros: budget.monthlyBudgetMicros,
          spent_micros: spent,
          period_start: new Date(since).toISOString(),
          period_end: new Date(periodEnd("monthly", now) ?? now).toISOString(),
        },
      });
      void track(deliver(budget, budget.webhookUrl, { id, body }, now, 1)).catch((error: unknown) =>
        deps.logger.warn(
          { accountId, eventId: id, err: error instanceof Error ? error.message : String(error) },
          "budget webhook failed",
        ),
      );
    }
  }

  /** One check per account at a time; charges during a check ask for one more after it. */
  function check(accountId: string): Promise<void> {
    const current = running.get(accountId);
    if (current) {
      again.add(accountId);
      return current;
    }
    const run = (async () => {
      try {
        do {
          again.delete(accountId);
          await checkOnce(accountId);
        } while (again.has(accountId));
      } finally {
        running.delete(accountId);
      }
    })();
    running.set(accountId, run);
    return track(run);
  }

  return {
    charged({ accountId, costMicros }) {
      if (stopped || costMicros <= 0) return;
      // Most accounts have no monthly budget: known so from the cache, nothing to check.
      const cached = budgets.get(accountId);
      if (cached && cached.until > deps.clock() && !(cached.budget?.monthlyBudgetMicros ?? 0))
        return;
      check(accountId).catch((error: unknown) =>
        deps.logger.warn(
          { accountId, err: error instanceof Error ? error.message : String(error) },
          "budget check failed",
        ),
      );
    },
    check,
    forget(accountId) {
      budgets.delete(accountId);
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
