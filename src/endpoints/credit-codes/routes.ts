/**
 * @module endpoints/credit-codes/routes
 * The credit code API: operators make, list and revoke codes (`/v1/admin/credit-codes`), an
 * account redeems one (`POST /v1/account/credit-codes/redeem`, a key or a session).
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Services } from "../../core/services.ts";
import { registerRoute } from "../../http/route.ts";
import {
  createCreditCodes,
  listCreditCodes,
  redeemCreditCode,
  revokeCreditCode,
} from "./credit-codes.ts";

const Status = Type.Union([
  Type.Literal("active"),
  Type.Literal("redeemed"),
  Type.Literal("revoked"),
  Type.Literal("expired"),
]);

export function registerCreditCodeRoutes(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/credit-codes",
    summary:
      "Make prepaid credit codes; the response holds each secret `code` once (listings show the prefix only).",
    tags: ["admin"],
    auth: "admin",
    body: Type.Object(
      {
        amount_micros: Type.Integer({
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          description: "Integer micro-USD each code credits; at most billing.max_balance_micros.",
        }),
        count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 1 })),
        expires_at: Type.Optional(
          Type.String({
            maxLength: 64,
            description: "ISO 8601 time after which a code is refused.",
          }),
        ),
        note: Type.Optional(Type.String({ maxLength: 200 })),
      },
      { additionalProperties: false },
    ),
    successStatus: 201,
    handler: ({ body, caller }) => createCreditCodes(services, caller, body),
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/credit-codes",
    summary: "List credit codes, newest first (prefixes only, never the codes).",
    tags: ["admin"],
    auth: "admin",
    query: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
        cursor: Type.Optional(Type.String({ maxLength: 1024 })),
        status: Type.Optional(Status),
      },
      { additionalProperties: false },
    ),
    handler: ({ query }) => listCreditCodes(services, query),
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/credit-codes/:id/revoke",
    summary: "Revoke a credit code that has not been redeemed; a redeemed code answers 409.",
    tags: ["admin"],
    auth: "admin",
    handler: ({ params }) => revokeCreditCode(services, params.id ?? ""),
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/credit-codes/redeem",
    summary:
      "Redeem a credit code: its amount is credited to the calling account, once. Case, dashes and spaces do not matter.",
    tags: ["account"],
    auth: "account",
    body: Type.Object(
      { code: Type.String({ minLength: 1, maxLength: 100 }) },
      { additionalProperties: false },
    ),
    handler: ({ body, caller, request }) =>
      redeemCreditCode(services, caller, { code: body.code, address: request.ip }),
  });
}
