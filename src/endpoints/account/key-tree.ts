/**
 * @module endpoints/account/key-tree
 * Which keys a caller may see and manage, and revocation with everything below. Keys form a
 * tree: a key minted by a key is its child. A session token, and an admin account's own keys
 * (not minted by a key), manage every key of the account; any other key manages its own subtree
 * (itself and the keys minted below it, at any depth) and nothing else.
 */
import { type Authenticator, type Caller, hasAdminPowers } from "../../auth/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { ApiKeyRecord, AuditOrigin, KeyStore } from "../../store/index.ts";

/** The key whose subtree bounds the caller, or undefined for full account powers. */
function subtreeRoot(caller: Caller): ApiKeyRecord | undefined {
  return hasAdminPowers(caller) ? undefined : caller.key;
}

/** The keys `caller` may list: the whole account, or the calling key's subtree. */
export async function visibleKeys(store: KeyStore, caller: Caller): Promise<ApiKeyRecord[]> {
  const root = subtreeRoot(caller);
  return root ? store.listKeyTree(root.id) : store.listKeys(caller.accountId);
}

/**
 * The key `id` when `caller` may manage it; otherwise `404 key_not_found`, the same answer as
 * for a key that does not exist, so a key learns nothing about keys outside its subtree.
 */
export async function findManagedKey(
  store: KeyStore,
  caller: Caller,
  id: string,
): Promise<ApiKeyRecord> {
  const key = await store.findKeyById(id);
  if (!key || key.accountId !== caller.accountId) throw new GatewayError("key_not_found", { id });
  const root = subtreeRoot(caller);
  if (!root || key.id === root.id) return key;
  const ancestors = await store.listKeyAncestors(key.id);
  if (!ancestors.some((ancestor) => ancestor.id === root.id))
    throw new GatewayError("key_not_found", { id });
  return key;
}

/**
 * Revokes a key and every key below it, and drops them all from this instance's key cache, so
 * none of them works from the next request on. Returns the key as revoked.
 */
export async function revokeKeyTree(
  store: KeyStore,
  authenticator: Pick<Authenticator, "invalidate">,
  key: ApiKeyRecord,
  at: number,
  audit?: AuditOrigin,
): Promise<ApiKeyRecord> {
  const revoked = await store.revokeKey(key.id, at, audit);
  for (const below of await store.listKeyTree(key.id)) authenticator.invalidate(below.keyHash);
  authenticator.invalidate(key.keyHash);
  return revoked ?? key;
}
