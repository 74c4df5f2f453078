/**
 * @module endpoints/billing/routes
 * Money as the caller sees it: the balance (with open holds), usage records with filters and
 * grouping, and `POST /v1/billing/quote`, which prices any billable request without running it.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { quoteRequest } from "../../core/quote.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerRoute } from "../../http/route.ts";
import type { UsageRecord } from "../../store/index.ts";
import { registerLedgerRoute } from "./ledger.ts";

function parseTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const millis = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(millis)) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${param}': expected ISO 8601 or Unix seconds.` },
      { param },
    );
  }
  return millis;
}

export function describeUsage(record: UsageRecord) {
  return {
    request_id: record.requestId,
    model: record.model,
    endpoint: record.endpoint,
    key_id: record.keyId,
    status: record.status,
    input_tokens: record.inputTokens,
    cached_input_tokens: record.cachedInputTokens,
    cache_write_tokens: record.cacheWriteTokens,
    output_tokens: record.outputTokens,
    reasoning_tokens: record.reasoningTokens,
    images: record.images,
    video_seconds: record.videoSeconds,
    characters: record.characters,
    cost_micros: record.costMicros,
    held_micros: record.heldMicros,
    overrun_micros: record.overrunMicros ?? 0,
    output_cap_lowered_to: record.outputCapLoweredTo ?? null,
    breakdown: record.breakdown ?? {},
    usage_source: record.usageSource,
    upstream_request_id: record.upstreamRequestId,
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    created_at: new Date(record.createdAt).toISOString(),
  };
}

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

/** What `GET /v1/account/usage` reads (also the MCP `get_usage` tool). */
export interface UsageQuery {
  from?: string;
  to?: string;
  model?: string;
  key?: string;
  group_by?: "day" | "model" | "key";
  limit?: string;
}

/** The body of `GET /v1/account/usage`: records newest first, or totals by day, model or key. */
export async function accountUsage(services: Services, accountId: string, query: UsageQuery) {
  const filter = {
    accountId,
    from: parseTime(query.from, "from"),
    to: parseTime(query.to, "to"),
    model: query.model,
    keyId: query.key,
    limit: Math.min(1000, Number(query.limit ?? 100) || 100),
  };
  if (query.group_by) {
    const groupBy = query.group_by;
    const groups = await services.store.groupUsage(filter, groupBy);
    return {
      object: "list" as const,
      group_by: groupBy,
      data: groups.map((group) => ({
        [groupBy]: group.group,
        requests: group.requests,
        input_tokens: group.inputTokens,
        output_tokens: group.outputTokens,
        cost_micros: group.costMicros,
      })),
    };
  }
  const records = await services.store.listUsage(filter);
  return { object: "list" as const, data: records.map(describeUsage) };
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
    summary: "Usage records of the account, newest first, or totals grouped by day, model or key.",
    tags: ["billing"],
    auth: "account",
    query: Type.Object({
      from: Type.Optional(
        Type.String({ description: "ISO 8601 time or Unix seconds (inclusive)." }),
      ),
      to: Type.Optional(Type.String({ description: "ISO 8601 time or Unix seconds (exclusive)." })),
      model: Type.Optional(Type.String()),
      key: Type.Optional(Type.String({ description: "API key id." })),
      group_by: Type.Optional(
        Type.Union([Type.Literal("day"), Type.Literal("model"), Type.Literal("key")]),
      ),
      limit: Type.Optional(
        Type.String({ pattern: "^[0-9]+$", description: "At most 1000; default 100." }),
      ),
    }),
    handler: ({ caller, query }) => accountUsage(services, caller.accountId, query),
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
