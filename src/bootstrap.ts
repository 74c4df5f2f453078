/**
 * @module bootstrap
 * First start with an empty database: create the admin account and its first key. The key is
 * random, or the value of `SWITCHYARD_ADMIN_KEY` for automation.
 */

import { API_KEY_PATTERN } from "./auth/index.ts";
import { createAccount } from "./endpoints/account/accounts.ts";
import { issueKey } from "./endpoints/account/issue-key.ts";
import { GatewayError } from "./errors/index.ts";
import type { AuditOrigin, Store } from "./store/index.ts";

export const BOOTSTRAP_EMAIL = "admin@localhost";

/** The first admin is made by the gateway itself, which the audit trail says. */
const BOOTSTRAP_ORIGIN: AuditOrigin = { actor: { type: "system" }, reason: "first start" };

/** Returns the new admin key when the database was empty, otherwise undefined. */
export async function bootstrapAdmin(
  store: Store,
  chosenKey: string | undefined,
  creditMicros = 0,
): Promise<string | undefined> {
  if ((await store.countAccounts()) > 0) return undefined;
  // An empty value (e.g. `SWITCHYARD_ADMIN_KEY=` in a compose file) means "not set".
  const chosen = chosenKey?.trim() || undefined;
  if (chosen !== undefined && !API_KEY_PATTERN.test(chosen)) {
    throw new Error(
      "SWITCHYARD_ADMIN_KEY must be 'sk-' followed by at least 40 letters or digits.",
    );
  }
  let account: Awaited<ReturnType<typeof createAccount>>;
  try {
    account = await createAccount(store, {
      email: BOOTSTRAP_EMAIL,
      role: "admin",
      balanceMicros: creditMicros,
      reason: "bootstrap credit",
      audit: BOOTSTRAP_ORIGIN,
    });
  } catch (error) {
    // Another instance starting on the same empty database made the admin first.
    if (GatewayError.isInstance(error) && error.code === "account_exists") return undefined;
    throw error;
  }
  const { key } = await issueKey(
    store,
    account.id,
    { name: "bootstrap" },
    chosen,
    BOOTSTRAP_ORIGIN,
  );
  return key;
}
