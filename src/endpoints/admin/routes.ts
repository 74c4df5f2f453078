/**
 * @module endpoints/admin/routes
 * Operator API, guarded by an admin account's key: accounts, keys for any account, credits and
 * debits (through the ledger), and revocation. Every change is recorded in the audit trail
 * (`GET /v1/admin/audit`, audit-route.ts) in the transaction that makes it.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { adjustBalance } from "../../billing/index.ts";
import { IDEMPOTENT_REPLAYED_HEADER, readIdempotencyKey } from "../../core/idempotency-key.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { auditOrigin } from "../../http/audit-origin.ts";
import { ListPageQuery, pageRequest, registerRoute } from "../../http/route.ts";
import { decodeCursor, pageFromList, pageOf } from "../../store/cursor.ts";
import { createAccount, describeAccount, NewAccountBody } from "../account/accounts.ts";
import {
  describeKey,
  issueKey,
  KeyOptions,
  resolveKeyAliases,
  resolveKeyModels,
} from "../account/issue-key.ts";
import { revokeKeyTree } from "../account/key-tree.ts";
import { registerAuditRoute } from "./audit-route.ts";
import { registerSuspensionRoutes } from "./suspension-routes.ts";

/** Amounts stay exact JavaScript integers (about 9 billion USD). */
const MAX_MICROS = Number.MAX_SAFE_INTEGER;

async function requireAccount(services: Services, id: string | undefined) {
  const account = id ? await services.store.findAccountById(id) : undefined;
  if (!account) throw new GatewayError("account_not_found", { id });
  return account;
}

export function registerAdminRoutes(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/accounts",
    summary:
      "List accounts, oldest first; `email` finds those whose email contains it (any case). Cursor pages (`cursor`, `next_cursor`); `offset` still skips, without a cursor.",
    tags: ["admin"],
    auth: "admin",
    query: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
      cursor: Type.Optional(Type.String({ description: "`next_cursor` of the previous page." })),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })),
      email: Type.Optional(
        Type.String({
          maxLength: 254,
          description: "Only accounts whose email contains this text (case-insensitive).",
        }),
      ),
    }),
    async handler({ query }) {
      const limit = Number(query.limit ?? 100);
      const offset = Number(query.offset ?? 0);
      if (query.cursor !== undefined && offset > 0) {
        throw new GatewayError(
          "invalid_request",
          { detail: "Pass `cursor` or `offset`, not both; `cursor` is the way to page." },
          { param: "offset" },
        );
      }
      const after =
        query.cursor === undefined ? undefined : decodeCursor(query.cursor, ["number", "string"]);
      const emailContains = query.email;
      const [accounts, total] = await Promise.all([
        services.store.listAccounts({
          limit: limit + 1,
          offset,
          ...(after ? { after: { createdAt: Number(after[0]), id: String(after[1]) } } : {}),
          ...(emailContains ? { emailContains } : {}),
        }),
        services.store.countAccounts({ emailContains }),
      ]);
      const page = pageOf(
        accounts,
        limit,
        (account) => [account.createdAt, account.id],
        describeAccount,
      );
      return { ...page, total, limit, offset };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/accounts",
    summary: "Create an account, optionally with a password and an opening balance.",
    tags: ["admin"],
    auth: "admin",
    body: NewAccountBody,
    successStatus: 201,
    async handler({ body, caller, request }) {
      const account = await createAccount(services.store, {
        email: body.email,
        password: body.password,
        role: body.role,
        balanceMicros: body.balance_micros,
        reason: "opening balance (admin)",
        maxBalanceMicros: services.config.billing.max_balance_micros,
        audit: auditOrigin(request, caller),
      });
      return describeAccount(account);
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/accounts/:id/keys",
    summary: "List an account's keys, oldest first, in cursor pages.",
    tags: ["admin"],
    auth: "admin",
    query: ListPageQuery,
    async handler({ params, query }) {
      const account = await requireAccount(services, params.id);
      const keys = await services.store.listKeys(account.id);
      return pageFromList(keys, pageRequest(query), (key) => [key.createdAt, key.id], describeKey);
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/accounts/:id/keys",
    summary: "Create a key for an account; the response holds the secret `key` once.",
    tags: ["admin"],
    auth: "admin",
    body: KeyOptions,
    successStatus: 201,
    async handler({ params, body, caller, request }) {
      const account = await requireAccount(services, params.id);
      const models = resolveKeyModels(services.catalog, body.models);
      const model_aliases = resolveKeyAliases(services.catalog, body.model_aliases);
      const { key, record } = await issueKey(
        services.store,
        account.id,
        { ...body, models, model_aliases },
        undefined,
        auditOrigin(request, caller),
      );
      return { ...describeKey(record), key };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/accounts/:id/credit",
    summary:
      "Credit (positive) or debit (negative) an account through the ledger. With `Idempotency-Key` a retry returns the first entry (`Idempotent-Replayed: true`) instead of moving the balance again.",
    tags: ["admin"],
    auth: "admin",
    body: Type.Object(
      {
        amount_micros: Type.Integer({
          minimum: -MAX_MICROS,
          maximum: MAX_MICROS,
          description: "Integer micro-USD; negative for a debit.",
        }),
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      },
      { additionalProperties: false },
    ),
    async handler({ params, body, caller, request, reply }) {
      const idempotencyKey = readIdempotencyKey(request.headers);
      const account = await requireAccount(services, params.id);
      if (body.amount_micros === 0) {
        throw new GatewayError(
          "invalid_parameter",
          { detail: "Invalid 'amount_micros': must not be 0." },
          { param: "amount_micros" },
        );
      }
      const { entry, balanceMicros, replayed } = await adjustBalance(services.store, {
        accountId: account.id,
        amountMicros: body.amount_micros,
        reason: `${body.reason} (by ${caller.accountId})`,
        maxBalanceMicros: services.config.billing.max_balance_micros,
        audit: auditOrigin(request, caller, body.reason),
        ...(idempotencyKey === null ? {} : { idempotencyKey }),
      });
      if (replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, "true");
      return {
        object: "ledger_entry",
        id: entry.id,
        account_id: account.id,
        kind: entry.kind,
        amount_micros: entry.amountMicros,
        reason: entry.reason,
        balance_micros: balanceMicros,
        created_at: new Date(entry.createdAt).toISOString(),
      };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/keys/:id/revoke",
    summary: "Revoke any key and every key minted below it; they stop working at once.",
    tags: ["admin"],
    auth: "admin",
    async handler({ params, caller, request }) {
      const existing = await services.store.findKeyById(params.id ?? "");
      if (!existing) throw new GatewayError("key_not_found", { id: params.id });
      return describeKey(
        await revokeKeyTree(
          services.store,
          services.authenticator,
          existing,
          services.now(),
          auditOrigin(request, caller),
        ),
      );
    },
  });

  registerAuditRoute(app, services);
  registerSuspensionRoutes(app, services);
}
