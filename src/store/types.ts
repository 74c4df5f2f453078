/**
 * @module store/types
 * Repository interfaces the rest of the gateway depends on. `sql-store.ts` implements them over
 * Kysely for SQLite and PostgreSQL.
 */

export type AccountRole = "user" | "admin";

export interface Account {
  id: string;
  email: string;
  role: AccountRole;
  balanceMicros: number;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  /** Model ids the key may use; empty means all. */
  models: string[];
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  expiresAt: number | null;
  revokedAt: number | null;
  createdAt: number;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  models: string[];
  rpm?: number | null;
  tpm?: number | null;
  concurrency?: number | null;
  expiresAt?: number | null;
}

export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: "credit" | "debit" | "hold" | "release" | "charge";
  amountMicros: number;
  holdMicros: number;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  breakdown: unknown;
  reason: string | null;
  createdAt: number;
}

export interface AccountStore {
  createAccount(input: {
    email: string;
    passwordHash: string | null;
    role: AccountRole;
  }): Promise<Account>;
  findAccountById(id: string): Promise<Account | undefined>;
  findAccountByEmail(
    email: string,
  ): Promise<(Account & { passwordHash: string | null }) | undefined>;
  listAccounts(options: { limit: number; offset: number }): Promise<Account[]>;
  countAccounts(): Promise<number>;
}

export interface KeyStore {
  createKey(input: NewApiKey): Promise<ApiKeyRecord>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findKeyById(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, at: number): Promise<ApiKeyRecord | undefined>;
}

export interface SessionStore {
  createSession(input: { tokenHash: string; accountId: string; expiresAt: number }): Promise<void>;
  findSession(tokenHash: string): Promise<{ accountId: string; expiresAt: number } | undefined>;
}

export interface LedgerStore {
  /** Appends a credit (positive) or debit (negative) and moves the balance, atomically. */
  adjustBalance(input: {
    accountId: string;
    amountMicros: number;
    reason: string;
    requestId?: string;
  }): Promise<{ entry: LedgerEntry; balanceMicros: number }>;
  listEntries(accountId: string, options: { limit: number }): Promise<LedgerEntry[]>;
  /** Accounts whose balance differs from the sum of their ledger entries. */
  verify(): Promise<{
    accounts: number;
    mismatches: { accountId: string; balance: number; ledgerSum: number }[];
  }>;
}

export interface Store extends AccountStore, KeyStore, SessionStore, LedgerStore {
  close(): Promise<void>;
}
