/**
 * @module store/sql-accounts
 * Accounts, API keys and login sessions over Kysely. A change given an `AuditOrigin` writes its
 * audit event in the same transaction.
 */
import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from "kysely";
import type { AuditOrigin } from "./audit-types.ts";
import { newId } from "./ids.ts";
import type { AccountsTable, ApiKeysTable, Database } from "./schema.ts";
import { auditInsert, insertWithAudit } from "./sql-audit.ts";
import type { TransactionRunner } from "./transactions.ts";
import {
  type Account,
  type AccountStore,
  type ApiKeyRecord,
  type KeyStore,
  type SessionStore,
  SPEND_LIMIT_PERIODS,
  type SpendLimitPeriod,
} from "./types.ts";

export function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    balanceMicros: Number(row.balance_micros),
    heldMicros: Number(row.held_micros),
    createdAt: Number(row.created_at),
    suspendedAt: row.suspended_at === null ? null : Number(row.suspended_at),
    suspendedReason: row.suspended_reason,
  };
}

/** An allowlist that cannot be read allows no model (fail closed), rather than every model. */
const UNREADABLE_ALLOWLIST = ["(unreadable allowlist)"];

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readModels(text: string): string[] {
  const value = parseJson(text);
  return Array.isArray(value) && value.every((item) => typeof item === "string")
    ? value
    : UNREADABLE_ALLOWLIST;
}

function readAliases(text: string): Record<string, string> {
  const value = parseJson(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string",
    ),
  );
}

function readNumber(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

/** A period that cannot be read is the tightest one (fail closed), rather than a lifetime. */
function readPeriod(value: string | null): SpendLimitPeriod | null {
  if (value === null) return null;
  return (SPEND_LIMIT_PERIODS as readonly string[]).includes(value)
    ? (value as SpendLimitPeriod)
    : "daily";
}

/** A stored key, whatever its columns hold: reading a row never throws. */
function toKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    models: readModels(row.models),
    modelAliases: readAliases(row.model_aliases),
    rpm: readNumber(row.rpm),
    tpm: readNumber(row.tpm),
    concurrency: readNumber(row.concurrency),
    expiresAt: readNumber(row.expires_at),
    revokedAt: readNumber(row.revoked_at),
    createdAt: Number(row.created_at),
    parentKeyId: row.parent_key_id ?? null,
    spendLimitMicros: readNumber(row.spend_limit_micros ?? null),
    spendLimitPeriod: readPeriod(row.spend_limit_period ?? null),
  };
}

/**
 * Keeps accounts whose email contains `text`, case-insensitively (emails are stored in lower
 * case); `%`, `_` and `\\` in the text match themselves.
 */
function withEmailFilter<Q extends SelectQueryBuilder<Database, "accounts", object>>(
  query: Q,
  text: string | undefined,
): Q {
  if (text === undefined || text === "") return query;
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (match) => `\\${match}`)}%`;
  return query.where(sql<boolean>`email like ${pattern} escape '\\'`) as Q;
}

/** How deep the subtree and ancestor walks go at most (keys nest far less deep). */
const MAX_WALK_DEPTH = 64;

/** What an audit snapshot shows of a key: its settings, never its hash. */
function keySnapshot(key: ApiKeyRecord) {
  return {
    account_id: key.accountId,
    name: key.name,
    prefix: key.prefix,
    models: key.models,
    model_aliases: key.modelAliases,
    rpm: key.rpm,
    tpm: key.tpm,
    concurrency: key.concurrency,
    expires_at: key.expiresAt,
    parent_key_id: key.parentKeyId,
  };
}

/** The key `id` and every key minted below it, at any depth, nearest first. */
function keyTreeQuery(db: Kysely<Database>, id: string) {
  return db
    .withRecursive("tree(id, depth)", (qb) =>
      qb
        .selectFrom("api_keys")
        .select(["id", sql<number>`0`.as("depth")])
        .where("id", "=", id)
        .unionAll((below) =>
          below
            .selectFrom("api_keys")
            .innerJoin("tree", "tree.id", "api_keys.parent_key_id")
            .select(["api_keys.id", sql<number>`tree.depth + 1`.as("depth")])
            .where("tree.depth", "<", MAX_WALK_DEPTH),
        ),
    )
    .selectFrom("api_keys")
    .innerJoin("tree", "tree.id", "api_keys.id")
    .selectAll("api_keys")
    .orderBy("tree.depth")
    .orderBy("api_keys.created_at");
}

/** A damaged parent chain could list a key twice; keep the first. */
function distinctKeys(rows: Selectable<ApiKeysTable>[]): ApiKeyRecord[] {
  const seen = new Set<string>();
  return rows.filter((row) => !seen.has(row.id) && seen.add(row.id)).map(toKey);
}

export function sqlAccountStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): AccountStore & KeyStore & SessionStore {
  const store: AccountStore & KeyStore & SessionStore = {
    async createAccount({ email, passwordHash, role }, audit?: AuditOrigin) {
      const row = {
        id: newId("acct"),
        email: email.toLowerCase(),
        password_hash: passwordHash,
        role,
        balance_micros: 0,
        created_at: Date.now(),
      };
      const insert = db.insertInto("accounts").values(row);
      await insertWithAudit(
        db,
        transactions,
        insert,
        audit,
        (origin) => ({
          action: origin.actor.type === "anonymous" ? "account.register" : "account.create",
          target: { type: "account", id: row.id },
          before: null,
          after: { email: row.email, role, has_password: passwordHash !== null },
        }),
        row.created_at,
      );
      return toAccount({ ...row, held_micros: 0, suspended_at: null, suspended_reason: null });
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
    async listAccounts({ limit, offset, after, emailContains }) {
      let select = withEmailFilter(db.selectFrom("accounts").selectAll(), emailContains);
      if (after) {
        select = select.where((eb) =>
          eb.or([
            eb("created_at", ">", after.createdAt),
            eb.and([eb("created_at", "=", after.createdAt), eb("id", ">", after.id)]),
          ]),
        );
      }
      const rows = await select
        .orderBy("created_at")
        .orderBy("id")
        .limit(limit)
        .offset(offset ?? 0)
        .execute();
      return rows.map(toAccount);
    },
    async countAccounts(options = {}) {
      const row = await withEmailFilter(
        db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("count")),
        options.emailContains,
      ).executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async createKey(input, audit?: AuditOrigin) {
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
        parent_key_id: input.parentKeyId ?? null,
        spend_limit_micros: input.spendLimitMicros ?? null,
        spend_limit_period:
          input.spendLimitMicros == null ? null : (input.spendLimitPeriod ?? null),
      };
      const insert = db.insertInto("api_keys").values(row);
      const key = toKey(row);
      await insertWithAudit(
        db,
        transactions,
        insert,
        audit,
        () => ({
          action: "key.create",
          target: { type: "api_key", id: row.id },
          before: null,
          after: keySnapshot(key),
        }),
        row.created_at,
      );
      return key;
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
    async countKeys(accountId) {
      const row = await db
        .selectFrom("api_keys")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async listKeyTree(id) {
      return distinctKeys(await keyTreeQuery(db, id).execute());
    },
    async listKeyAncestors(id) {
      const rows = await db
        .withRecursive("up(id, depth)", (qb) =>
          qb
            .selectFrom("api_keys")
            .select(["parent_key_id as id", sql<number>`1`.as("depth")])
            .where("id", "=", id)
            .where("parent_key_id", "is not", null)
            .unionAll((above) =>
              above
                .selectFrom("api_keys")
                .innerJoin("up", "up.id", "api_keys.id")
                .select(["api_keys.parent_key_id as id", sql<number>`up.depth + 1`.as("depth")])
                .where("api_keys.parent_key_id", "is not", null)
                .where("up.depth", "<", MAX_WALK_DEPTH),
            ),
        )
        .selectFrom("api_keys")
        .innerJoin("up", "up.id", "api_keys.id")
        .selectAll("api_keys")
        .orderBy("up.depth")
        .execute();
      return rows.map(toKey);
    },
    async revokeKey(id, at, audit?: AuditOrigin) {
      return transactions.run(function* () {
        const tree = distinctKeys(
          (yield keyTreeQuery(db, id).compile()) as Array<Selectable<ApiKeysTable>>,
        );
        const key = tree[0];
        if (!key) return undefined;
        const open = tree.filter((each) => each.revokedAt === null).map((each) => each.id);
        if (open.length > 0) {
          yield db
            .updateTable("api_keys")
            .set({ revoked_at: at })
            .where("id", "in", open)
            .where("revoked_at", "is", null)
            .compile();
        }
        if (audit) {
          yield auditInsert(db, {
            ...audit,
            action: "key.revoke",
            target: { type: "api_key", id },
            before: { revoked_at: key.revokedAt },
            after: { revoked_at: key.revokedAt ?? at, revoked_key_ids: open },
          });
        }
        return { ...key, revokedAt: key.revokedAt ?? at };
      });
    },

    async createSession({ tokenHash, accountId, expiresAt }, audit?: AuditOrigin) {
      const at = Date.now();
      // Expired sessions are never read again: each log-in clears them, so the table holds
      // about the sessions of one lifetime (log-ins are rate-limited).
      await db.deleteFrom("sessions").where("expires_at", "<=", at).execute();
      const insert = db.insertInto("sessions").values({
        token_hash: tokenHash,
        account_id: accountId,
        expires_at: expiresAt,
        created_at: at,
      });
      await insertWithAudit(
        db,
        transactions,
        insert,
        audit,
        () => ({
          action: "account.login",
          target: { type: "account", id: accountId },
          before: null,
          after: { session_expires_at: expiresAt },
        }),
        at,
      );
    },
    async deleteSession(tokenHash, audit?: AuditOrigin) {
      await transactions.run(function* () {
        const [ended] = (yield db
          .deleteFrom("sessions")
          .where("token_hash", "=", tokenHash)
          .returning(["account_id", "expires_at"])
          .compile()) as Array<{ account_id: string; expires_at: number }>;
        if (ended && audit) {
          yield auditInsert(db, {
            ...audit,
            action: "account.logout",
            target: { type: "account", id: ended.account_id },
            before: { session_expires_at: Number(ended.expires_at) },
            after: null,
          });
        }
      });
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
  return store;
}
