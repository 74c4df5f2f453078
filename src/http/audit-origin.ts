/**
 * @module http/audit-origin
 * Who is acting, as the audit trail records it, for a request: the caller's account, key (or
 * session) and role, the client address, and the request id.
 */
import type { FastifyRequest } from "fastify";
import type { Caller } from "../auth/index.ts";
import type { AccountRole, AuditOrigin } from "../store/index.ts";

/** The origin of an authenticated request; `reason` when the caller gave one. */
export function auditOrigin(
  request: FastifyRequest,
  caller: Caller,
  reason?: string | null,
): AuditOrigin {
  return {
    actor: {
      type: caller.key ? "key" : "session",
      accountId: caller.accountId,
      keyId: caller.key?.id ?? null,
      role: caller.role,
      ip: request.ip,
    },
    requestId: String(request.id),
    reason: reason ?? null,
  };
}

/** The origin of a login: the account that proved its password. */
export function passwordOrigin(
  request: FastifyRequest,
  account: { id: string; role: AccountRole },
): AuditOrigin {
  return {
    actor: { type: "password", accountId: account.id, role: account.role, ip: request.ip },
    requestId: String(request.id),
  };
}

/** The origin of a request without a credential (registration). */
export function anonymousOrigin(request: FastifyRequest): AuditOrigin {
  return { actor: { type: "anonymous", ip: request.ip }, requestId: String(request.id) };
}
