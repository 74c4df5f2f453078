/**
 * The audit event is part of the change it records: when its insert fails, the credit, the key,
 * the revocation and the rotation are rolled back with it. On SQLite and (when reachable)
 * PostgreSQL. Also: snapshots drop secret-named fields at any depth.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../../test/support/cluster.ts";
import { postgresReachable } from "../../test/support/postgres.ts";
import type { AuditOrigin } from "./audit-types.ts";
import { type DatabaseHandle, openDatabase } from "./connect.ts";
import { sqlStore } from "./index.ts";
import type { Store } from "./types.ts";

const pgAvailable = await postgresReachable();
const ORIGIN: AuditOrigin = { actor: { type: "cli" }, reason: "test" };

function auditSuite(name: string, open: () => Promise<{ url: string; drop(): Promise<void> }>) {
  describe(`the audit trail on ${name}`, () => {
    let handle: DatabaseHandle;
    let store: Store;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const database = await open();
      drop = database.drop;
      handle = await openDatabase(database.url);
      store = sqlStore(handle);
    });
    afterAll(async () => {
      await store?.close();
      await drop?.();
    });

    it("keeps no secret-named field in a snapshot, at any depth", async () => {
      const event = await store.recordAudit({
        ...ORIGIN,
        action: "test.scrub",
        target: { type: "test", id: "t1" },
        before: { key: "sk-secret", nested: { password: "p", token_hash: "h", kept: 1 } },
        after: { list: [{ secret: "s", name: "n" }], api_key: "k", visible: true },
      });
      expect(event.before).toEqual({ nested: { kept: 1 } });
      expect(event.after).toEqual({ list: [{ name: "n" }], visible: true });
      const [listed] = await store.listAudit({ targetId: "t1", limit: 10 });
      expect(listed).toEqual(event);
    });

    it("rolls a change back when its audit event cannot be written", async () => {
      const account = await store.createAccount({
        email: "atomic@example.com",
        passwordHash: null,
        role: "user",
      });
      await store.adjustBalance({ accountId: account.id, amountMicros: 1_000, reason: "seed" });
      const key = await store.createKey({
        accountId: account.id,
        name: "k",
        keyHash: "hash-1",
        prefix: "sk-abcd…",
        models: [],
      });
      await handle.db.schema.dropTable("audit_events").execute();

      await expect(
        store.adjustBalance({
          accountId: account.id,
          amountMicros: 500,
          reason: "x",
          audit: ORIGIN,
        }),
      ).rejects.toThrow();
      await expect(
        store.createKey(
          { accountId: account.id, name: "k2", keyHash: "hash-2", prefix: "sk-efgh…", models: [] },
          ORIGIN,
        ),
      ).rejects.toThrow();
      await expect(store.revokeKey(key.id, 1234, ORIGIN)).rejects.toThrow();
      await expect(store.rotateWebhookSecret(account.id, "whsec_x", ORIGIN)).rejects.toThrow();
      await expect(
        store.createAccount(
          { email: "never@example.com", passwordHash: null, role: "user" },
          ORIGIN,
        ),
      ).rejects.toThrow();

      expect((await store.findAccountById(account.id))?.balanceMicros).toBe(1_000);
      expect(await store.listEntries(account.id, { limit: 10 })).toHaveLength(1);
      expect(await store.findKeyByHash("hash-2")).toBeUndefined();
      expect((await store.findKeyById(key.id))?.revokedAt).toBeNull();
      expect(await store.findAccountByEmail("never@example.com")).toBeUndefined();
      expect((await store.verify()).problems).toEqual([]);

      // Without an audit origin the same changes go through as before.
      await store.adjustBalance({ accountId: account.id, amountMicros: 500, reason: "x" });
      expect((await store.revokeKey(key.id, 1234))?.revokedAt).toBe(1234);
    });
  });
}

auditSuite("SQLite", async () => ({ url: ":memory:", drop: async () => {} }));
describe.skipIf(!pgAvailable)("PostgreSQL", () => {
  auditSuite("PostgreSQL", freshDatabase);
});
