/**
 * @module tasks/budget-alerts
 * Soft limits (docs/budgets.md): after a charge, an account with a monthly budget has its
 * month's spend compared with `budgets.alert_thresholds`; each threshold reached alerts once
 * per month — a `warn` log line and, when the account set a budget webhook, a signed
 * `budget.threshold_reached` event through the webhook dispatcher the video tasks use. Which
 * instance alerts is decided by the store (`claimBudgetAlert`: one row per account, month and
 * threshold). Soft limits never refuse a request. The delivery lives in the alert's row: the
 * claiming instance makes the first attempt at once, and every later one (a retry on the
 * webhook schedule, or the attempt of an instance that stopped mid-way, once its lease has run
 * out) is taken up by whichever instance sweeps first (every `tasks.tick_ms`).
 */
import type { Logger } from "pino";
import { periodEnd, periodStart } from "../billing/index.ts";
import type {
  AccountBudget,
  BudgetAlertKey,
  BudgetStore,
  BudgetWebhookDelivery,
  TaskStore,
} from "../store/index.ts";
import type { TaskMetrics, WebhookDispatcher } from "./video-engine.ts";

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
  /** Takes up the deliveries due now (retries, and those a stopped instance left); resolves after their attempts. */
  sweep(): Promise<void>;
  /** Resolves when every check and delivery started so far has finished (tests). */
  idle(): Promise<void>;
  stop(): void;
}

/** The event id of an alert's webhook (the same on every attempt). */
export function budgetEventId(alert: BudgetAlertKey): string {
  return `evt_budget_${alert.accountId}_${alert.periodStart}_${alert.thresholdBp}`;
}

/** Deliveries taken per sweep. */
const SWEEP_BATCH = 20;

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
  /** How often due deliveries are looked for (`tasks.tick_ms`); 0 for never (tests sweep). */
  sweepMs: number;
  /** How long an attempt keeps its delivery to this instance (`tasks.lease_seconds`). */
  leaseMs: number;
  metrics?: Pick<TaskMetrics, "webhookAttempt">;
}): BudgetAlerts {
  const budgets = new Map<string, { budget: AccountBudget | undefined; until: number }>();
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const pending = new Set<Promise<unknown>>();
  let sweeping: Promise<Array<Promise<void>>> | undefined;
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

  /** One attempt of `delivery` (leased to this instance), recorded with what comes next. */
  async function attempt(delivery: BudgetWebhookDelivery): Promise<void> {
    if (stopped) return;
    // The account may have removed or changed its URL since the alert: nothing more goes to
    // an address it no longer names (read afresh, not from the cache).
    const current = await deps.store.findAccountBudget(delivery.accountId);
    if (current?.webhookUrl !== delivery.url) {
      await deps.store.recordBudgetWebhookAttempt(delivery, {
        state: "gave_up",
        at: deps.clock(),
        attempted: false,
      });
      return;
    }
    const secret = await deps.store.webhookSecret(delivery.accountId, deps.webhooks.newSecret);
    const startedAt = deps.clock();
    const result = await deps.webhooks.deliver({
      url: delivery.url,
      body: delivery.body,
      secret,
      eventId: budgetEventId(delivery),
    });
    const attempts = delivery.attempts + 1;
    const nextAt = startedAt + deps.webhooks.retryDelayMs(attempts);
    // No attempt starts past the give-up window: give up now if the next one would.
    const outcome = result.ok
      ? ({ state: "delivered", at: startedAt } as const)
      : deps.webhooks.givesUp(delivery.firstAttemptAt ?? startedAt, Math.max(nextAt, deps.clock()))
        ? ({ state: "gave_up", at: startedAt } as const)
        : ({ state: "pending", at: startedAt, nextAt } as const);
    await deps.store.recordBudgetWebhookAttempt(delivery, outcome);
    deps.metrics?.webhookAttempt(
      result.ok ? "delivered" : outcome.state === "gave_up" ? "gave_up" : "failed",
    );
    if (outcome.state === "gave_up")
      deps.logger.warn(
        {
          accountId: delivery.accountId,
          eventId: budgetEventId(delivery),
          attempts,
          status: result.status,
          err: result.error,
        },
        "budget webhook not delivered; giving up",
      );
  }

  const attemptLogged = (delivery: BudgetWebhookDelivery) =>
    track(attempt(delivery)).catch((error: unknown) =>
      deps.logger.warn(
        {
          accountId: delivery.accountId,
          eventId: budgetEventId(delivery),
          err: error instanceof Error ? error.message : String(error),
        },
        "budget webhook failed",
      ),
    );

  /** Deliveries whose attempt is under way here (a sweep never starts a second one). */
  const sending = new Set<string>();
  const sendingKey = (alert: BudgetAlertKey) =>
    `${alert.accountId} ${alert.periodStart} ${alert.thresholdBp}`;

  /**
   * Starts the attempts due now without waiting for them: a receiver that hangs until the
   * timeout holds up only its own delivery, never the next sweep's.
   */
  async function sweepOnce(): Promise<Array<Promise<void>>> {
    const room = SWEEP_BATCH - sending.size;
    if (room <= 0) return [];
    const due = await deps.store.claimDueBudgetWebhooks(deps.clock(), deps.leaseMs, room);
    const started: Array<Promise<void>> = [];
    for (const delivery of due) {
      const key = sendingKey(delivery);
      if (sending.has(key)) continue;
      sending.add(key);
      started.push(attemptLogged(delivery).finally(() => sending.delete(key)));
    }
    return started;
  }

  /** One claim at a time; the caller's promise waits for the attempts its claim started. */
  function sweep(): Promise<void> {
    if (stopped) return Promise.resolve();
    sweeping ??= track(sweepOnce()).finally(() => {
      sweeping = undefined;
    });
    return sweeping.then(async (started) => {
      await Promise.all(started);
    });
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
      const alert = { accountId, periodStart: since, thresholdBp: bp };
      const threshold = bp / 10_000;
      const webhook = budget.webhookUrl
        ? {
            url: budget.webhookUrl,
            body: JSON.stringify({
              id: budgetEventId(alert),
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
            }),
            at: now,
            leaseUntil: now + deps.leaseMs,
          }
        : undefined;
      const claimed = await deps.store.claimBudgetAlert({
        ...alert,
        spentMicros: spent,
        budgetMicros: budget.monthlyBudgetMicros,
        ...(webhook && { webhook }),
      });
      if (!claimed) continue;
      deps.logger.warn(
        {
          accountId,
          threshold,
          spentMicros: spent,
          monthlyBudgetMicros: budget.monthlyBudgetMicros,
        },
        `account ${accountId} reached ${bp / 100}% of its monthly budget`,
      );
      // The first attempt is this instance's (the claim leased it); the rest are the sweep's,
      // which leaves a delivery alone while this process is still making an attempt of it.
      if (webhook) {
        const key = sendingKey(alert);
        sending.add(key);
        void attemptLogged({
          ...alert,
          url: webhook.url,
          body: webhook.body,
          attempts: 0,
          firstAttemptAt: null,
          leaseUntil: webhook.leaseUntil,
        }).finally(() => sending.delete(key));
      }
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

  const timer =
    deps.sweepMs > 0
      ? setInterval(() => {
          sweep().catch((error: unknown) =>
            deps.logger.warn(
              { err: error instanceof Error ? error.message : String(error) },
              "budget webhook sweep failed",
            ),
          );
        }, deps.sweepMs)
      : undefined;
  timer?.unref();

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
    sweep,
    forget(accountId) {
      budgets.delete(accountId);
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
    },
  };
}
