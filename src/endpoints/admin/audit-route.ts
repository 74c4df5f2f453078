/**
 * @module endpoints/admin/audit-route
 * `GET /v1/admin/audit`: the audit trail, newest first, filtered by actor account, action,
 * target and time, paged with the shared cursor convention (store/cursor.ts).
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerRoute } from "../../http/route.ts";
import { decodeCursor, pageOf } from "../../store/cursor.ts";
import type { AuditEvent } from "../../store/index.ts";

/** The furthest time a filter may name: the end of the range of JavaScript dates. */
const MAX_TIME_MS = 8.64e15;

/** `from` / `to`: ISO 8601 or Unix seconds, as Unix ms; anything else is a 400 naming it. */
export function parseAuditTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const millis = /^\d{1,16}$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (!Number.isSafeInteger(millis) || Math.abs(millis) > MAX_TIME_MS) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${param}': expected ISO 8601 or Unix seconds.` },
      { param },
    );
  }
  return millis;
}

/** The public form of one event. */
export function describeAuditEvent(event: AuditEvent) {
  return {
    id: event.id,
    object: "audit_event",
    created_at: new Date(event.createdAt).toISOString(),
    action: event.action,
    actor: {
      type: event.actor.type,
      account_id: event.actor.accountId,
      key_id: event.actor.keyId,
      role: event.actor.role,
      ip: event.actor.ip,
    },
    target: { type: event.target.type, id: event.target.id },
    before: event.before,
    after: event.after,
    reason: event.reason,
    request_id: event.requestId,
  };
}

const Filter = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }));

export const AuditQuerySchema = Type.Object({
  actor: Filter("Only events whose actor is this account id."),
  action: Filter("Only events with this action (`account.credit`, `key.revoke`, …)."),
  target: Filter("Only events whose target has this id (an account, key, …)."),
  from: Filter("ISO 8601 time or Unix seconds (inclusive)."),
  to: Filter("ISO 8601 time or Unix seconds (exclusive)."),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(
    Type.String({ maxLength: 1024, description: "`next_cursor` of the previous page." }),
  ),
});

export function registerAuditRoute(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/audit",
    summary: "The audit trail: every administrative and account-management action, newest first.",
    tags: ["admin"],
    auth: "admin",
    query: AuditQuerySchema,
    async handler({ query }) {
      const limit = Number(query.limit ?? 100);
      const [beforeSeq] = query.cursor ? decodeCursor(query.cursor, ["number"]) : [];
      const events = await services.store.listAudit({
        actorAccountId: query.actor || undefined,
        action: query.action || undefined,
        targetId: query.target || undefined,
        from: parseAuditTime(query.from, "from"),
        to: parseAuditTime(query.to, "to"),
        beforeSeq: beforeSeq as number | undefined,
        limit: limit + 1,
      });
      return pageOf(events, limit, (event) => [event.seq], describeAuditEvent);
    },
  });
}
