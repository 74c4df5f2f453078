/**
 * @module endpoints/account/accounts
 * Account creation (registration, admin, CLI and first-start bootstrap share it), the email
 * check, and the public description of an account.
 */
import { FormatRegistry, Type } from "@sinclair/typebox";
import { hashPassword } from "../../auth/index.ts";
import { adjustBalance } from "../../billing/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { Account, AccountRole, AuditOrigin, Store } from "../../store/index.ts";

/** The longest email accepted (the SMTP path limit). */
export const EMAIL_MAX_LENGTH = 254;

const WHITESPACE = /\s/;

/**
 * `local@domain.tld`: one `@` with something before it, no whitespace, and a dot in the domain
 * with something on both sides. One pass over at most 254 characters, no backtracking: a
 * regular expression here once took seconds on an 80 KB string.
 */
export function isEmail(value: string): boolean {
  if (value.length > EMAIL_MAX_LENGTH) return false;
  const at = value.indexOf("@");
  if (at <= 0 || value.indexOf("@", at + 1) !== -1) return false;
  const dot = value.indexOf(".", at + 2);
  if (dot === -1 || dot > value.length - 2) return false;
  return !WHITESPACE.test(value);
}

// Schemas say `format: "email"`; TypeBox checks it with the linear function above.
FormatRegistry.Set("email", isEmail);

export const EmailSchema = Type.String({
  format: "email",
  maxLength: EMAIL_MAX_LENGTH,
  description: "`local@domain.tld`, at most 254 characters; stored in lower case.",
});

/** An account as an operator creates it (`POST /v1/admin/accounts`, `switchyard accounts create`). */
export const NewAccountBody = Type.Object(
  {
    email: EmailSchema,
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 200 })),
    role: Type.Optional(Type.Union([Type.Literal("user"), Type.Literal("admin")])),
    balance_micros: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { additionalProperties: false },
);

export function describeAccount(account: Account) {
  return {
    id: account.id,
    object: "account",
    email: account.email,
    role: account.role,
    balance_micros: account.balanceMicros,
    balance_usd: (account.balanceMicros / 1_000_000).toFixed(6),
    created_at: new Date(account.createdAt).toISOString(),
    suspended_at: account.suspendedAt === null ? null : new Date(account.suspendedAt).toISOString(),
    suspended_reason: account.suspendedReason,
  };
}

export async function createAccount(
  store: Store,
  input: {
    email: string;
    password?: string;
    role?: AccountRole;
    balanceMicros?: number;
    reason?: string;
    /** `billing.max_balance_micros`; an opening balance above it is refused before anything is made. */
    maxBalanceMicros?: number;
    /** Who creates it: the account and its opening credit each get their audit event. */
    audit?: AuditOrigin;
  },
): Promise<Account> {
  const maxBalanceMicros = input.maxBalanceMicros ?? Number.MAX_SAFE_INTEGER;
  if (input.balanceMicros && input.balanceMicros > maxBalanceMicros) {
    throw new GatewayError(
      "balance_limit_exceeded",
      { balance: 0, amount: input.balanceMicros, max: maxBalanceMicros },
      { param: "balance_micros" },
    );
  }
  if (await store.findAccountByEmail(input.email)) throw new GatewayError("account_exists");
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  let account: Account;
  try {
    account = await store.createAccount(
      {
        email: input.email,
        passwordHash,
        role: input.role ?? "user",
      },
      input.audit,
    );
  } catch (error) {
    // Two registrations of one email at once: the unique index lets only the first through.
    if (await store.findAccountByEmail(input.email)) throw new GatewayError("account_exists");
    throw error;
  }
  if (input.balanceMicros) {
    const { balanceMicros } = await adjustBalance(store, {
      accountId: account.id,
      amountMicros: input.balanceMicros,
      reason: input.reason ?? "initial credit",
      maxBalanceMicros,
      audit: input.audit && {
        ...input.audit,
        // The new account receives its own opening credit, whoever asked for it.
        reason: input.reason ?? "initial credit",
      },
    });
    return { ...account, balanceMicros };
  }
  return account;
}
