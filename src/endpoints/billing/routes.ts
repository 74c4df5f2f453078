/**
 * @module endpoints/billing/routes
 * Money as the caller sees it: the balance (with open holds), usage records with filters and
 * grouping (the account's own, and every account's for an admin: usage-report.ts), and
 * `POST /v1/billing/quote`, which prices any billable request without running it.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { quoteRequest } from "../../core/quote.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerRoute } from "../../http/route.ts";
import { registerLedgerRoute } from "./ledger.ts";
import {
  AccountUsageQuery,
  AdminUsageQuery,
  answerUsage,
  DEFAULT_PAGE,
  MAX_PAGE,
  usagePage,
} from "./usage-report.ts";

export { describeUsage } from "./usage-report.ts";

/** The balance body of `GET /v1/account/balance` (also the MCP `get_balance` tool). */
export async function accountBalance(services: Services, accountId: string) {
  const account = await services.store.findAccountById(accountId);
  if (!account) throw new GatewayError("invalid_api_key");
  return {
    object: "balance" as const,
    balance_micros: account.balanceMicros,
    held_micros: account.heldMicros,
    available_micros: account.balanceMicros - account.heldMicros,
    currency: "USD" as const,
  };
}

/** What `GET /v1/account/usage` reads (also the MCP `get_usage` tool and resource). */
export type UsageQuery = Omit<Static<typeof AccountUsageQuery>, "limit" | "format"> & {
  limit?: number | string;
};

/** One page of the account's usage: records newest first, or totals by day, model or key. */
export async function accountUsage(services: Services, accountId: string, query: UsageQuery) {
  const limit = Math.min(MAX_PAGE, Number(query.limit ?? DEFAULT_PAGE) || DEFAULT_PAGE);
  return usagePage(services, accountId, { ...query, limit });
}

export function registerBillingRoutes(app: FastifyInstance, services: Services): void {
  registerLedgerRoute(app, services);
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/balance",
    summary: "Balance, open holds and available balance in integer micro-USD.",
    tags: ["billing"],
    auth: "account",
    handler: ({ caller }) => accountBalance(services, caller.accountId),
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/usage",
    summary:
      "Usage records of the account, newest first, or totals grouped by day, model or key; cursor pages, or CSV.",
    tags: ["billing"],
    auth: "account",
    query: AccountUsageQuery,
    alsoAnswers: ["text/csv"],
    handler: ({ caller, query, request, reply }) =>
      answerUsage(services, caller.accountId, query, request, reply),
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/usage",
    summary:
      "Usage records of every account (admin), newest first, or totals grouped by day, model, key or account; cursor pages, or CSV.",
    tags: ["admin"],
    auth: "admin",
    query: AdminUsageQuery,
    alsoAnswers: ["text/csv"],
    handler: ({ query, request, reply }) =>
      answerUsage(services, query.account, query, request, reply),
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/billing/quote",
    summary:
      "The most a request would cost (its billing hold) with the price breakdown, without running it.",
    tags: ["billing"],
    auth: "key",
    body: Type.Object(
      { model: Type.String() },
      { additionalProperties: true, description: "The body of any billable request." },
    ),
    handler({ caller, body }) {
      if (!caller.key) throw new GatewayError("invalid_api_key");
      return quoteRequest(services, app.modelEndpoints, caller.key, body);
    },
  });
}
