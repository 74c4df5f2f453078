import { describe, expect, it } from "vitest";
import type { Account, ApiKeyRecord } from "../store/index.ts";
import { generateApiKey, hashSecret } from "./api-key.ts";
import { createAuthenticator } from "./authenticator.ts";

const token = generateApiKey();
const account: Account = {
  id: "acc_1",
  email: "a@example.com",
  role: "user",
  balanceMicros: 0,
  heldMicros: 0,
  createdAt: 0,
  suspendedAt: null,
  suspendedReason: null,
};

function keyRecord(revokedAt: number | null): ApiKeyRecord {
  return {
    id: "key_1",
    accountId: account.id,
    name: "k",
    keyHash: hashSecret(token),
    prefix: token.slice(0, 8),
    models: [],
    modelAliases: {},
    rpm: null,
    tpm: null,
    concurrency: null,
    expiresAt: null,
    revokedAt,
    createdAt: 0,
    parentKeyId: null,
  };
}

/** A key store whose next key read waits for `release` (a lookup in flight). */
function slowStore() {
  let revoked = false;
  let release: () => void = () => {};
  let holdNext = false;
  const store = {
    async findKeyByHash() {
      const seen = keyRecord(revoked ? 1 : null);
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      return seen;
    },
    findAccountById: async () => account,
    listKeyAncestors: async () => [],
    findSession: async () => undefined,
  };
  return {
    store: store as unknown as Parameters<typeof createAuthenticator>[0],
    holdNextRead() {
      holdNext = true;
    },
    revoke() {
      revoked = true;
    },
    release: () => release(),
  };
}

describe("authenticator", () => {
  it("does not cache a key read before a revocation that invalidated it while the read ran", async () => {
    const { store, holdNextRead, revoke, release } = slowStore();
    const authenticator = createAuthenticator(store, { cacheTtlMs: 60_000 });
    holdNextRead();
    // A first lookup reads the key (not yet revoked) and is still in flight...
    const lookup = authenticator.authenticateKey(token);
    await new Promise((resolve) => setImmediate(resolve));
    // ...when the revocation commits and drops the key from the cache.
    revoke();
    authenticator.invalidate(hashSecret(token));
    release();
    // The lookup that overlapped the revocation reads again and sees it.
    await expect(lookup).rejects.toMatchObject({ code: "invalid_api_key" });
    // What it cached is the revoked key, which the cache refuses.
    expect(() => authenticator.cachedKey(token)).toThrow(/Invalid API key/);
    await expect(authenticator.authenticateKey(token)).rejects.toMatchObject({
      code: "invalid_api_key",
    });
  });

  it("caches a lookup no invalidation overlapped", async () => {
    const { store } = slowStore();
    const authenticator = createAuthenticator(store, { cacheTtlMs: 60_000 });
    const caller = await authenticator.authenticateKey(token);
    expect(caller.key.id).toBe("key_1");
    expect(authenticator.cachedKey(token)?.key.id).toBe("key_1");
  });
});
