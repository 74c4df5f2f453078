/**
 * @module endpoints/account/budget-routes
 * An account's monthly budget (docs/budgets.md): a soft limit whose thresholds
 * (`budgets.alert_thresholds`) are logged and sent as signed `budget.threshold_reached` events
 * to the account's budget webhook. Read by the account; set by the account (a session, or a key
 * no key minted) or by an admin.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { assertAccountWide } from "../../auth/index.ts";
import { periodEnd, periodStart } from "../../billing/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { auditOrigin } from "../../http/audit-origin.ts";
import { registerRoute } from "../../http/route.ts";
import type { AuditOrigin } from "../../store/index.ts";
import { thresholdBasisPoints } from "../../tasks/index.ts";

/** The highest monthly budget: one billion dollars, in micro-USD. */
const MAX_BUDGET_MICROS = 1_000_000_000_000_000;

export const BudgetOptions = Type.Object(
  {
    monthly_budget_micros: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 1,
          maximum: MAX_BUDGET_MICROS,
          description:
            "The account's monthly budget (UTC months); null removes it, absent keeps it.",
        }),
        Type.Null(),
      ]),
    ),
    webhook_url: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 2048,
          description:
            "Where signed `budget.threshold_reached` events go; null removes it, absent keeps it.",
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

async function describeBudget(services: Services, accountId: string) {
  const budget = await services.store.findAccountBudget(accountId);
  const now = services.now();
  const since = periodStart("monthly", now);
  const thresholds = services.config.budgets.alert_thresholds;
  const alerted = new Set(await services.store.listBudgetAlerts(accountId, since));
  return {
    object: "budget",
    account_id: accountId,
    monthly_budget_micros: budget?.monthlyBudgetMicros ?? null,
    webhook_url: budget?.webhookUrl ?? null,
    period_start: new Date(since).toISOString(),
    period_end: new Date(periodEnd("monthly", now) ?? now).toISOString(),
    spent_micros: await services.store.accountSpend(accountId, since),
    alert_thresholds: thresholds,
    alerts_sent: thresholds.filter((fraction) => alerted.has(thresholdBasisPoints(fraction))),
  };
}

async function setBudget(
  services: Services,
  accountId: string,
  body: {
    monthly_budget_micros?: number | null | undefined;
    webhook_url?: string | null | undefined;
  },
  audit: AuditOrigin,
) {
  // An empty string is checked (and refused) like any other URL, not stored.
  if (typeof body.webhook_url === "string")
    await services.videoTasks.checkWebhookUrl(body.webhook_url);
  // The fields given are merged with the stored ones in the store's transaction, so that two
  // changes at once (one the budget, one the webhook) both take effect.
  const result = await services.store.setAccountBudget(
    accountId,
    {
      ...(body.monthly_budget_micros !== undefined && {
        monthlyBudgetMicros: body.monthly_budget_micros,
      }),
      ...(body.webhook_url !== undefined && { webhookUrl: body.webhook_url }),
    },
    audit,
  );
  if ("refused" in result)
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'webhook_url': set 'monthly_budget_micros' for the alerts to watch." },
      { param: "webhook_url" },
    );
  services.budgets?.forget(accountId);
  // A budget lowered below what the month already spent alerts now, not at the next charge.
  await services.budgets?.check(accountId);
  return describeBudget(services, accountId);
}

export function registerBudgetRoutes(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/budget",
    summary: "The account's monthly budget, this month's spend and the alerts sent.",
    tags: ["account"],
    auth: "account",
    handler: ({ caller }) => describeBudget(services, caller.accountId),
  });

  registerRoute(app, services, {
    method: "PATCH",
    path: "/v1/account/budget",
    summary:
      "Set, change or remove the account's monthly budget and its alert webhook (a soft limit).",
    tags: ["account"],
    auth: "account",
    body: BudgetOptions,
    async handler({ caller, body, request }) {
      assertAccountWide(caller, "change the account's budget");
      return setBudget(services, caller.accountId, body, auditOrigin(request, caller));
    },
  });

  registerRoute(app, services, {
    method: "PATCH",
    path: "/v1/admin/accounts/:id/budget",
    summary: "Set, change or remove an account's monthly budget and its alert webhook.",
    tags: ["admin"],
    auth: "admin",
    body: BudgetOptions,
    async handler({ params, body, caller, request }) {
      const account = params.id ? await services.store.findAccountById(params.id) : undefined;
      if (!account) throw new GatewayError("account_not_found", { id: params.id });
      return setBudget(services, account.id, body, auditOrigin(request, caller));
    },
  });
}
