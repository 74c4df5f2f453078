/**
 * @module endpoints/account/accounts
 * Account creation (registration, admin, CLI and first-start bootstrap share it) and the public
 * description of an account.
 */
import { hashPassword } from "../../auth/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { Account, AccountRole, Store } from "../../store/index.ts";

export const EMAIL_PATTERN = "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$";

export function describeAccount(account: Account) {
  return {
    id: account.id,
    object: "account",
    email: account.email,
    role: account.role,
    balance_micros: account.balanceMicros,
    balance_usd: (account.balanceMicros / 1_000_000).toFixed(6),
    created_at: new Date(account.createdAt).toISOString(),
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
  },
): Promise<Account> {
  if (await store.findAccountByEmail(input.email)) throw new GatewayError("account_exists");
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  let account: Account;
  try {
    account = await store.createAccount({
      email: input.email,
      passwordHash,
      role: input.role ?? "user",
    });
  } catch (error) {
    // Two registrations of one email at once: the unique index lets only the first through.
    if (await store.findAccountByEmail(input.email)) throw new GatewayError("account_exists");
    throw error;
  }
  if (input.balanceMicros) {
    const { balanceMicros } = await store.adjustBalance({
      accountId: account.id,
      amountMicros: input.balanceMicros,
      reason: input.reason ?? "initial credit",
    });
    return { ...account, balanceMicros };
  }
  return account;
}
