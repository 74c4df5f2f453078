/**
 * @module endpoints/billing/ledger
 * `GET /v1/account/ledger`: the calling account's ledger, newest first, in the shared cursor
 * convention, each entry with the balance right after it; `kind` keeps one kind of entry.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Services } from "../../core/services.ts";
import { registerRoute } from "../../http/route.ts";
import { decodeCursor, pageOf } from "../../store/cursor.ts";
import type { LedgerPageEntry } from "../../store/index.ts";

export function describeLedgerEntry(entry: LedgerPageEntry) {
  return {
    id: entry.id,
    object: "ledger_entry" as const,
    kind: entry.kind,
    amount_micros: entry.amountMicros,
    hold_micros: entry.holdMicros,
    balance_after_micros: entry.balanceAfterMicros,
    reason: entry.reason,
    request_id: entry.requestId,
    model: entry.model,
    key_id: entry.keyId,
    created_at: new Date(entry.createdAt).toISOString(),
  };
}

export function registerLedgerRoute(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/ledger",
    summary:
      "The account's ledger entries, newest first: credits, debits, credit codes, holds, releases and charges, each with the balance after it.",
    tags: ["billing"],
    auth: "account",
    query: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
        cursor: Type.Optional(Type.String({ maxLength: 1024 })),
        kind: Type.Optional(
          Type.Union(
            ["credit", "debit", "credit_code", "hold", "release", "charge"].map((kind) =>
              Type.Literal(kind),
            ),
          ),
        ),
      },
      { additionalProperties: false },
    ),
    async handler({ caller, query }) {
      const limit = query.limit ?? 50;
      const beforeSeq =
        query.cursor === undefined
          ? undefined
          : (decodeCursor(query.cursor, ["number"])[0] as number);
      const entries = await services.store.ledgerPage(caller.accountId, {
        limit: limit + 1,
        ...(beforeSeq === undefined ? {} : { beforeSeq }),
        ...(query.kind === undefined ? {} : { kind: query.kind }),
      });
      return pageOf(entries, limit, (entry) => [entry.seq], describeLedgerEntry);
    },
  });
}
