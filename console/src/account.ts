/**
 * @module console/account
 * Signing in and out, and keeping the signed-in account (with its balance) fresh.
 */
import { ApiError, api } from "./api.ts";
import { navigate } from "./router.ts";
import { session, sessionKeys } from "./state.ts";
import type { Account } from "./types.ts";

export async function refreshAccount(): Promise<void> {
  try {
    session.set(await api<Account>("/v1/account"));
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 401) session.set(null);
    else throw failure;
  }
}

export async function logIn(email: string, password: string): Promise<void> {
  const body = await api<{ account?: Account }>("/v1/account/login", {
    json: { email, password, session: "cookie" },
  });
  if (body.account) session.set(body.account);
  else await refreshAccount();
}

export async function logOut(): Promise<void> {
  try {
    await api("/v1/account/logout", { method: "POST" });
  } catch {
    // the session may already be gone; the console forgets it either way
  } finally {
    sessionKeys.set([]);
    session.set(null);
    navigate("/login");
  }
}
