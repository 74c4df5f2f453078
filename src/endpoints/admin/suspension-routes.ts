/**
 * @module endpoints/admin/suspension-routes
 * `POST /v1/admin/accounts/{id}/suspend` and `…/unsuspend`: an operator stops an account (abuse,
 * an unpaid invoice) without revoking anything, and lifts it later. While suspended, every key
 * of the account (minted ones included) and every session is refused with `403
 * account_suspended`, and so is a log-in; its keys are dropped from the key caches of every
 * instance as a revocation drops them. Requests under way finish and are billed; video tasks
 * already submitted are followed and billed as usual.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { auditOrigin } from "../../http/audit-origin.ts";
import { registerRoute } from "../../http/route.ts";
import { describeAccount } from "../account/accounts.ts";

const SuspendBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        "Why; recorded on the account and in the audit trail (not shown to the account).",
    }),
  },
  { additionalProperties: false },
);

/** Drops every key of the account from the key caches (this instance's and, published, the others'). */
async function forgetKeys(services: Services, accountId: string): Promise<void> {
  for (const key of await services.store.listKeys(accountId))
    services.authenticator.invalidate(key.keyHash);
}

export function registerSuspensionRoutes(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/accounts/:id/suspend",
    summary:
      "Suspend an account: its keys and sessions are refused (`403 account_suspended`) until it is unsuspended; nothing is revoked or deleted.",
    tags: ["admin"],
    auth: "admin",
    body: SuspendBody,
    async handler({ params, body, caller, request }) {
      const id = params.id ?? "";
      if (id === caller.accountId)
        throw new GatewayError("invalid_request", {
          detail: "An admin cannot suspend its own account; another admin can.",
        });
      const found = await services.store.setAccountSuspension(
        id,
        { at: services.now(), reason: body.reason },
        auditOrigin(request, caller, body.reason),
      );
      if (!found) throw new GatewayError("account_not_found", { id });
      await forgetKeys(services, id);
      const account = await services.store.findAccountById(id);
      if (!account) throw new GatewayError("account_not_found", { id });
      return describeAccount(account);
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/accounts/:id/unsuspend",
    summary: "Lift an account's suspension: its keys and sessions work again at once.",
    tags: ["admin"],
    auth: "admin",
    async handler({ params, caller, request }) {
      const id = params.id ?? "";
      const found = await services.store.setAccountSuspension(
        id,
        null,
        auditOrigin(request, caller),
      );
      if (!found) throw new GatewayError("account_not_found", { id });
      const account = await services.store.findAccountById(id);
      if (!account) throw new GatewayError("account_not_found", { id });
      return describeAccount(account);
    },
  });
}
