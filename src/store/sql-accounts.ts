/**
 * @module store/sql-accounts
 * Accounts, API keys and login sessions over Kysely.
 */
import type { Kysely, Selectable } from "kysely";
import { newId } from "./ids.ts";
import type { AccountsTable, ApiKeysTable, Database } from "./schema.ts";
import type { Account, AccountStore, ApiKeyRecord, KeyStore, SessionStore } from "./types.ts";

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    balanceMicros: Number(row.balance_micros),
    heldMicros: Number(row.held_micros),
    createdAt: Number(row.created_at),
  };
}

function toKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    models: JSON.parse(row.models) as string[],
    modelAliases: JSON.parse(row.model_aliases) as Record<string, string>,
    rpm: row.rpm,
    tpm: row.tpm,
    concurrency: row.concurrency,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    createdAt: Number(row.created_at),
  };
}

export function sqlAccountStore(db: Kysely<Database>): AccountStore & KeyStore & SessionStore {
  return {
    async createAccount({ email, passwordHash, role }) {
      const row = {
        id: newId("acct"),
        email: email.toLowerCase(),
        password_hash: passwordHash,
        role,
        balance_micros: 0,
        created_at: Date.now(),
      };
      await db.insertInto("accounts").values(row).execute();
      return toAccount({ ...row, held_micros: 0 });
    },
    async findAccountById(id) {
      const row = await db
        .selectFrom("accounts")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toAccount(row);
    },
    async findAccountByEmail(email) {
      const row = await db
        .selectFrom("accounts")
        .selectAll()
        .where("email", "=", email.toLowerCase())
        .executeTakeFirst();
      return row && { ...toAccount(row), passwordHash: row.password_hash };
    },
    async listAccounts({ limit, offset }) {
      const rows = await db
        .selectFrom("accounts")
        .selectAll()
        .orderBy("created_at")
        .orderBy("id")
        .limit(limit)
        .offset(offset)
        .execute();
      return rows.map(toAccount);
    },
    async countAccounts() {
      const row = await db
        .selectFrom("accounts")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async createKey(input) {
      const row = {
        id: newId("key"),
        account_id: input.accountId,
        name: input.name,
        key_hash: input.keyHash,
        prefix: input.prefix,
        models: JSON.stringify(input.models),
        model_aliases: JSON.stringify(input.modelAliases ?? {}),
        rpm: input.rpm ?? null,
        tpm: input.tpm ?? null,
        concurrency: input.concurrency ?? null,
        expires_at: input.expiresAt ?? null,
        revoked_at: null,
        created_at: Date.now(),
      };
      await db.insertInto("api_keys").values(row).execute();
      return toKey(row);
    },
    async findKeyByHash(keyHash) {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("key_hash", "=", keyHash)
        .executeTakeFirst();
      return row && toKey(row);
    },
    async findKeyById(id) {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toKey(row);
    },
    async listKeys(accountId) {
      const rows = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("account_id", "=", accountId)
        .orderBy("created_at")
        .execute();
      return rows.map(toKey);
    },
    async revokeKey(id, at) {
      await db
        .updateTable("api_keys")
        .set({ revoked_at: at })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .execute();
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toKey(row);
    },

    async createSession({ tokenHash, accountId, expiresAt }) {
      await db
        .insertInto("sessions")
        .values({
          token_hash: tokenHash,
          account_id: accountId,
          expires_at: expiresAt,
          created_at: Date.now(),
        })
        .execute();
    },
    async findSession(tokenHash) {
      const row = await db
        .selectFrom("sessions")
        .selectAll()
        .where("token_hash", "=", tokenHash)
        .executeTakeFirst();
      return row && { accountId: row.account_id, expiresAt: Number(row.expires_at) };
    },
  };
}
