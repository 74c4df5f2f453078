/**
 * @module endpoints/credit-codes/credit-codes
 * Prepaid credit codes, the top-up path: an operator makes codes (`createCreditCodes`), lists
 * them (`listCreditCodes`, never the secret) and revokes them (`revokeCreditCode`); an account
 * redeems one (`redeemCreditCode`), once, through the ledger. Every change to a code goes
 * through one of these functions, so whatever must accompany it (an audit record) goes here.
 */
import type { Caller } from "../../auth/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { decodeCursor, type Page, pageOf } from "../../store/cursor.ts";
import { type CreditCode, type CreditCodeStatus, newId } from "../../store/index.ts";
import { parseExpiry } from "../account/issue-key.ts";
import {
  canonicalCreditCode,
  creditCodePrefix,
  generateCreditCode,
  hashCreditCode,
} from "./code-format.ts";

const iso = (millis: number | null) => (millis === null ? null : new Date(millis).toISOString());

export function creditCodeStatus(code: CreditCode, now: number): CreditCodeStatus {
  if (code.redeemedAt !== null) return "redeemed";
  if (code.revokedAt !== null) return "revoked";
  if (code.expiresAt !== null && code.expiresAt <= now) return "expired";
  return "active";
}

export function describeCreditCode(code: CreditCode, now: number) {
  return {
    id: code.id,
    object: "credit_code" as const,
    prefix: code.prefix,
    amount_micros: code.amountMicros,
    currency: "USD" as const,
    note: code.note,
    status: creditCodeStatus(code, now),
    created_at: new Date(code.createdAt).toISOString(),
    expires_at: iso(code.expiresAt),
    redeemed_at: iso(code.redeemedAt),
    redeemed_by: code.redeemedBy,
    revoked_at: iso(code.revokedAt),
  };
}

export interface NewCreditCodes {
  amount_micros: number;
  count?: number;
  expires_at?: string;
  note?: string;
}

/** Makes `count` codes; the answer is the only place their secrets ever appear. */
export async function createCreditCodes(services: Services, caller: Caller, input: NewCreditCodes) {
  const max = services.config.billing.max_balance_micros;
  if (input.amount_micros > max) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid 'amount_micros': must be at most ${max} (billing.max_balance_micros).` },
      { param: "amount_micros" },
    );
  }
  const now = services.now();
  const expiresAt = parseExpiry(input.expires_at);
  if (expiresAt !== null && expiresAt <= now) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'expires_at': must be in the future." },
      { param: "expires_at" },
    );
  }
  const made = Array.from({ length: input.count ?? 1 }, () => {
    const secret = generateCreditCode();
    const code: CreditCode = {
      id: newId("cc"),
      prefix: creditCodePrefix(secret),
      amountMicros: input.amount_micros,
      note: input.note ?? null,
      createdBy: caller.accountId,
      createdAt: now,
      expiresAt,
      redeemedAt: null,
      redeemedBy: null,
      revokedAt: null,
    };
    return { secret, code };
  });
  await services.store.createCreditCodes(
    made.map(({ secret, code }) => ({ ...code, codeHash: hashCreditCode(secret) })),
  );
  return {
    object: "list" as const,
    data: made.map(({ secret, code }) => ({ ...describeCreditCode(code, now), code: secret })),
  };
}

export async function listCreditCodes(
  services: Services,
  query: { limit?: number; cursor?: string; status?: CreditCodeStatus },
): Promise<Page<ReturnType<typeof describeCreditCode>>> {
  const limit = query.limit ?? 20;
  const after =
    query.cursor === undefined
      ? undefined
      : (([createdAt, id]) => ({ createdAt: createdAt as number, id: id as string }))(
          decodeCursor(query.cursor, ["number", "string"]),
        );
  const now = services.now();
  const codes = await services.store.listCreditCodes({
    limit: limit + 1,
    now,
    ...(after ? { after } : {}),
    ...(query.status ? { status: query.status } : {}),
  });
  return pageOf(
    codes,
    limit,
    (code) => [code.createdAt, code.id],
    (code) => describeCreditCode(code, now),
  );
}

/** Revokes a code not yet redeemed (again: no change); a redeemed code is a 409. */
export async function revokeCreditCode(services: Services, id: string) {
  const existing = await services.store.findCreditCode(id);
  if (!existing) throw new GatewayError("credit_code_not_found", { id: id.slice(0, 200) });
  if (existing.redeemedAt !== null) throw new GatewayError("credit_code_redeemed");
  const now = services.now();
  const revoked = await services.store.revokeCreditCode(id, now);
  if (!revoked) throw new GatewayError("credit_code_not_found", { id: id.slice(0, 200) });
  // Redeemed in the meantime: the redemption won.
  if (revoked.redeemedAt !== null) throw new GatewayError("credit_code_redeemed");
  return describeCreditCode(revoked, now);
}

/**
 * Redeems a typed code for the calling account. Every attempt counts against the redemption
 * limits first, so codes cannot be guessed at speed; unknown, revoked and expired codes all
 * answer the same `credit_code_invalid`.
 */
export async function redeemCreditCode(
  services: Services,
  caller: Caller,
  input: { code: string; address: string },
) {
  services.attempts.attempt("redeem", input.address, caller.accountId);
  const canonical = canonicalCreditCode(input.code);
  if (canonical === undefined) throw new GatewayError("credit_code_invalid", {}, { param: "code" });
  const result = await services.store.redeemCreditCode({
    codeHash: hashCreditCode(canonical),
    accountId: caller.accountId,
    at: services.now(),
    maxBalanceMicros: services.config.billing.max_balance_micros,
  });
  if (!result.redeemed) {
    if (result.reason === "above_maximum") {
      throw new GatewayError(
        "balance_limit_exceeded",
        {
          balance: result.balanceMicros,
          amount: result.amountMicros,
          max: services.config.billing.max_balance_micros,
        },
        { param: "code" },
      );
    }
    if (result.reason === "redeemed") throw new GatewayError("credit_code_redeemed");
    throw new GatewayError("credit_code_invalid", {}, { param: "code" });
  }
  return {
    object: "credit_code_redemption" as const,
    amount_micros: result.code.amountMicros,
    balance_micros: result.balanceMicros,
    currency: "USD" as const,
    code_prefix: result.code.prefix,
  };
}
