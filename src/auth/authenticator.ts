/**
 * @module auth/authenticator
 * Turns a bearer credential into a caller: an API key (for every API) or a login session token
 * (for the account endpoints only). Key lookups are cached in memory by hash and dropped from
 * the cache when a key is revoked, so revocation takes effect at once on this instance. A key
 * minted by a key is loaded with its ancestors and refused when any of them is revoked. The
 * keys and sessions of a suspended account are refused (`account_suspended`); suspending drops
 * the account's keys from the cache as a revocation does.
 */
import { GatewayError } from "../errors/index.ts";
import type {
  AccountRole,
  AccountStore,
  ApiKeyRecord,
  KeyStore,
  SessionStore,
} from "../store/index.ts";
import { API_KEY_PATTERN, hashSecret } from "./api-key.ts";

export interface Caller {
  accountId: string;
  role: AccountRole;
  /** Absent when the caller used a login session token. */
  key?: ApiKeyRecord;
  /** The hash of the login session token the caller used (absent for a key). */
  sessionHash?: string;
}

export interface Authenticator {
  /** Resolves an `sk-` key; throws `invalid_api_key` for a missing, unknown, revoked or expired key. */
  authenticateKey(token: string | undefined): Promise<Caller & { key: ApiKeyRecord }>;
  /** Accepts an `sk-` key or a session token. */
  authenticateAccount(token: string | undefined): Promise<Caller>;
  /**
   * The caller of a key found in the cache, synchronously; undefined when the key must be looked
   * up (then call `authenticateKey`). Throws `invalid_api_key` like `authenticateKey`.
   */
  cachedKey(token: string | undefined): (Caller & { key: ApiKeyRecord }) | undefined;
  /** Drops a key from the cache (call after revoke or update). */
  invalidate(keyHash: string): void;
  /** Drops every cached key (changes may have been missed, e.g. while notifications were down). */
  invalidateAll(): void;
}

export const SESSION_PREFIX = "sess_";

/**
 * Whether the caller holds an admin account's full powers: the account's login session or one
 * of its own keys. A key minted by a key is bounded by its parent even on an admin account, so
 * handing out a restricted key never hands out the admin API.
 */
export function hasAdminPowers(caller: Caller): boolean {
  return caller.role === "admin" && (caller.key === undefined || caller.key.parentKeyId === null);
}

/**
 * Refuses a key minted by a key a change that binds the whole account (its budget, its webhook
 * signing secret): those belong to the account's session and its own keys.
 */
export function assertAccountWide(caller: Caller, action: string): void {
  if (caller.key?.parentKeyId)
    throw new GatewayError("invalid_request", {
      detail: `A key minted by a key cannot ${action}; use a session or a key no key minted.`,
    });
}

/** An operator suspended the account: its keys and sessions are refused (`403`). */
export function refuseSuspended(account: { suspendedAt: number | null }): void {
  if (account.suspendedAt !== null) throw new GatewayError("account_suspended");
}

interface CacheEntry {
  caller: Caller & { key: ApiKeyRecord };
  until: number;
}

export function createAuthenticator(
  store: AccountStore & KeyStore & SessionStore,
  options: {
    /** How long a key lookup is trusted; a function is asked at each lookup. */
    cacheTtlMs?: number | (() => number);
    now?: () => number;
  } = {},
): Authenticator {
  const configuredTtl = options.cacheTtlMs ?? 60_000;
  const ttl = () => (typeof configuredTtl === "number" ? configuredTtl : configuredTtl());
  const now = options.now ?? Date.now;
  const cache = new Map<string, CacheEntry>();
  /** Counts invalidations, so a lookup that overlapped one does not cache what it read. */
  let invalidations = 0;

  function reject(): never {
    throw new GatewayError(
      "invalid_api_key",
      {},
      { headers: { "www-authenticate": 'Bearer realm="switchyard"' } },
    );
  }

  function usable(key: ApiKeyRecord, time: number): boolean {
    return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > time);
  }

  /** A key works while it and every key above it are neither revoked nor expired. */
  function checkedCaller(entry: CacheEntry, time: number): Caller & { key: ApiKeyRecord } {
    const { key } = entry.caller;
    if (!usable(key, time)) reject();
    if (key.ancestors) for (const ancestor of key.ancestors) if (!usable(ancestor, time)) reject();
    return entry.caller;
  }

  function cachedKey(token: string | undefined): (Caller & { key: ApiKeyRecord }) | undefined {
    if (!token || !API_KEY_PATTERN.test(token)) reject();
    const time = now();
    const entry = cache.get(hashSecret(token));
    return entry && entry.until >= time ? checkedCaller(entry, time) : undefined;
  }

  async function authenticateKey(
    token: string | undefined,
  ): Promise<Caller & { key: ApiKeyRecord }> {
    if (!token || !API_KEY_PATTERN.test(token)) reject();
    const hash = hashSecret(token);
    const time = now();
    const cached = cache.get(hash);
    if (cached && cached.until >= time) return checkedCaller(cached, time);
    for (let attempt = 1; ; attempt += 1) {
      const seen = invalidations;
      const entry = await loadEntry(hash, time);
      // A revocation that committed and invalidated while these reads ran may have come after
      // them: read again rather than put what they saw back in the cache (and, should keys
      // keep changing, answer from a third read without caching it).
      if (invalidations === seen) cache.set(hash, entry);
      else if (attempt < 3) continue;
      return checkedCaller(entry, time);
    }
  }

  async function loadEntry(hash: string, time: number): Promise<CacheEntry> {
    const found = await store.findKeyByHash(hash);
    const account = found && (await store.findAccountById(found.accountId));
    if (!found || !account) {
      cache.delete(hash);
      reject();
    }
    // Not cached: lifting the suspension takes effect at the next request.
    refuseSuspended(account);
    // A minted key carries its chain of parents: for their budgets and their revocation.
    const key =
      found.parentKeyId === null
        ? found
        : { ...found, ancestors: await store.listKeyAncestors(found.id) };
    return { caller: { accountId: account.id, role: account.role, key }, until: time + ttl() };
  }

  return {
    authenticateKey,
    cachedKey,
    async authenticateAccount(token) {
      if (token?.startsWith(SESSION_PREFIX)) {
        const sessionHash = hashSecret(token);
        const session = await store.findSession(sessionHash);
        const account =
          session && session.expiresAt > now() && (await store.findAccountById(session.accountId));
        if (!account) reject();
        refuseSuspended(account);
        return { accountId: account.id, role: account.role, sessionHash };
      }
      return authenticateKey(token);
    },
    invalidate(keyHash) {
      invalidations += 1;
      cache.delete(keyHash);
    },
    invalidateAll() {
      invalidations += 1;
      cache.clear();
    },
  };
}
