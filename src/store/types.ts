/**
 * @module store/types
 * Repository interfaces the rest of the gateway depends on. `sql-store.ts` implements them over
 * Kysely for SQLite and PostgreSQL. Video tasks have theirs in `task-types.ts`, money paths
 * (holds, settlement, usage records) in `billing-types.ts`.
 */
import type { AuditOrigin, AuditStore } from "./audit-types.ts";
import type { BillingStore } from "./billing-types.ts";
import type { BudgetStore } from "./budget-types.ts";
import type { TaskStore } from "./task-types.ts";

export type AccountRole = "user" | "admin";

export interface Account {
  id: string;
  email: string;
  role: AccountRole;
  balanceMicros: number;
  /** Sum of open billing holds. */
  heldMicros: number;
  createdAt: number;
  /** When an operator suspended the account, or null; its keys and sessions are refused. */
  suspendedAt: number | null;
  suspendedReason: string | null;
}

/** The periods a key's spend cap may count over (UTC boundaries; weeks start on Monday). */
export const SPEND_LIMIT_PERIODS = ["daily", "weekly", "monthly"] as const;
export type SpendLimitPeriod = (typeof SPEND_LIMIT_PERIODS)[number];

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  /** Model ids the key may use; empty means all. */
  models: string[];
  /** Requested model id or `*` pattern → catalog model id, applied before the deployment's. */
  modelAliases: Record<string, string>;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  expiresAt: number | null;
  revokedAt: number | null;
  createdAt: number;
  /** The key that minted this one (`POST /v1/account/keys` with a key); null otherwise. */
  parentKeyId: string | null;
  /** The most this key and the keys below it may spend per period; null: no cap. */
  spendLimitMicros?: number | null;
  /** The cap's period; null: the key's lifetime. */
  spendLimitPeriod?: SpendLimitPeriod | null;
  /**
   * The keys above this one, nearest first, when the authenticator loaded them: the key shares
   * each one's rate and concurrency budget and stops working when any of them does.
   */
  ancestors?: readonly ApiKeyRecord[];
}

export interface NewApiKey {
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  models: string[];
  modelAliases?: Record<string, string>;
  rpm?: number | null;
  tpm?: number | null;
  concurrency?: number | null;
  expiresAt?: number | null;
  parentKeyId?: string | null;
  spendLimitMicros?: number | null;
  spendLimitPeriod?: SpendLimitPeriod | null;
}

export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: "credit" | "debit" | "hold" | "release" | "charge" | "credit_code";
  amountMicros: number;
  holdMicros: number;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  breakdown: unknown;
  reason: string | null;
  createdAt: number;
}

/** A ledger entry as the account's ledger lists it. */
export interface LedgerPageEntry extends LedgerEntry {
  /** The entry's position in the ledger (the cursor of a page). */
  seq: number;
  /** The account's balance right after this entry. */
  balanceAfterMicros: number;
}

export interface AccountListOptions {
  limit: number;
  offset?: number;
  /** Accounts after this one in the list's order (created_at, then id). */
  after?: { createdAt: number; id: string };
  /** Only accounts whose email contains this text (case-insensitive). */
  emailContains?: string;
}

export interface AccountStore {
  createAccount(
    input: {
      email: string;
      passwordHash: string | null;
      role: AccountRole;
    },
    audit?: AuditOrigin,
  ): Promise<Account>;
  findAccountById(id: string): Promise<Account | undefined>;
  findAccountByEmail(
    email: string,
  ): Promise<(Account & { passwordHash: string | null }) | undefined>;
  /** Oldest first (id on a tie), after `after` or skipping `offset`, whose email contains `emailContains`. */
  listAccounts(options: AccountListOptions): Promise<Account[]>;
  countAccounts(options?: { emailContains?: string }): Promise<number>;
}

export interface AccountSuspensionStore {
  /**
   * Suspends the account (`suspension` given) or lifts its suspension (null), with its
   * `account.suspend` / `account.unsuspend` audit event in the same transaction. Suspending a
   * suspended account, or lifting a suspension there is none of, changes and records nothing.
   * False for an unknown account.
   */
  setAccountSuspension(
    id: string,
    suspension: { at: number; reason: string } | null,
    audit?: AuditOrigin,
  ): Promise<boolean>;
}

export interface KeyStore {
  /** With `audit`, the `key.create` event is written in the same transaction as the key. */
  createKey(input: NewApiKey, audit?: AuditOrigin): Promise<ApiKeyRecord>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findKeyById(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** How many keys the account has, revoked ones included. */
  countKeys(accountId: string): Promise<number>;
  /** The key and every key minted below it, at any depth (the key first). */
  listKeyTree(id: string): Promise<ApiKeyRecord[]>;
  /** The keys above `id`, nearest first (empty for a key no key minted). */
  listKeyAncestors(id: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key and every key below it (those not yet revoked); returns the key. */
  revokeKey(id: string, at: number, audit?: AuditOrigin): Promise<ApiKeyRecord | undefined>;
}

export interface SessionStore {
  createSession(
    input: { tokenHash: string; accountId: string; expiresAt: number },
    audit?: AuditOrigin,
  ): Promise<void>;
  findSession(tokenHash: string): Promise<{ accountId: string; expiresAt: number } | undefined>;
  /** Ends a session at once (logout, audited as `account.logout`); nothing for an unknown hash. */
  deleteSession(tokenHash: string, audit?: AuditOrigin): Promise<void>;
}

export interface LedgerStore {
  /**
   * Appends a credit (positive) or debit (negative) and moves the balance, atomically. Throws
   * `BalanceOutOfRange` (ledger-errors.ts) (and changes nothing) when the new balance would exceed
   * `maxBalanceMicros` or fall below what open holds keep.
   */
  adjustBalance(input: {
    accountId: string;
    amountMicros: number;
    reason: string;
    /**
     * Makes the entry once per account: when the account already has an entry with this
     * request id, nothing changes and that entry comes back with `replayed: true` and the
     * current balance (whatever the new amount and reason; the caller compares them).
     */
    requestId?: string;
    /** Highest balance allowed after the entry (`Number.MAX_SAFE_INTEGER` when absent). */
    maxBalanceMicros?: number;
    /** Who made it: an `account.credit` / `account.debit` event in the entry's transaction. */
    audit?: AuditOrigin;
  }): Promise<{ entry: LedgerEntry; balanceMicros: number; replayed: boolean }>;
  listEntries(accountId: string, options: { limit: number }): Promise<LedgerEntry[]>;
  /**
   * One page of the account's ledger, newest first, each entry with the balance right after it;
   * `beforeSeq` continues below the last page, `kind` keeps one kind of entry. Fetches up to
   * `limit` entries (ask for one more to learn whether there are more).
   */
  ledgerPage(
    accountId: string,
    options: { limit: number; beforeSeq?: number; kind?: string },
  ): Promise<LedgerPageEntry[]>;
  /** Checks every account against its ledger; reports what is wrong, whatever the data hold. */
  verify(): Promise<LedgerReport>;
}

export type LedgerProblemKind =
  /** `accounts.balance_micros` differs from the sum of the account's ledger amounts. */
  | "balance_mismatch"
  /** `accounts.held_micros` differs from the sum of the account's ledger holds. */
  | "held_mismatch"
  | "negative_balance"
  | "negative_held"
  /** More held than the balance (a hold is placed only within what is available). */
  | "held_above_balance"
  /** A charge larger than the hold it settled. */
  | "charge_above_hold"
  /** A `charge` ledger entry that adds money instead of taking it. */
  | "positive_charge"
  /** A stored amount that is not an integer within ±(2^53 − 1). */
  | "out_of_range"
  /** A spend day row (what caps and budgets read) differs from the usage records it sums. */
  | "spend_rows_mismatch";

export interface LedgerProblem {
  kind: LedgerProblemKind;
  accountId: string;
  /** Plain-text facts behind the problem (the amounts compared, the entry id). */
  detail: string;
}

export interface LedgerReport {
  accounts: number;
  entries: number;
  problems: LedgerProblem[];
}

export interface Store
  extends AccountStore,
    KeyStore,
    SessionStore,
    LedgerStore,
    BillingStore,
    TaskStore,
    ResponseStore,
    AuditStore,
    CreditCodeStore,
    BudgetStore,
    AccountSuspensionStore {
  close(): Promise<void>;
}

/** A Responses API answer kept for reading back and continuing (`store: true`). */
export interface StoredResponse {
  id: string;
  accountId: string;
  model: string;
  /** The Response object as it was answered. */
  response: Record<string, unknown>;
  /** The items that formed its input, a continued conversation's included. */
  inputItems: Record<string, unknown>[];
  createdAt: number;
}

/** Stored Responses API answers; every read and delete is within one account. */
export interface ResponseStore {
  saveResponse(record: StoredResponse): Promise<void>;
  /** The account's response with this id, or undefined (another account's is not found). */
  findResponse(accountId: string, id: string): Promise<StoredResponse | undefined>;
  /** True when the account had a response with this id. */
  deleteResponse(accountId: string, id: string): Promise<boolean>;
}

/** A prepaid credit code (the secret code itself is never stored). */
export interface CreditCode {
  id: string;
  prefix: string;
  amountMicros: number;
  note: string | null;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number | null;
  redeemedAt: number | null;
  redeemedBy: string | null;
  revokedAt: number | null;
}

export type CreditCodeStatus = "active" | "redeemed" | "revoked" | "expired";

/** What a redemption did, or why it did nothing. */
export type RedeemResult =
  | { redeemed: true; code: CreditCode; balanceMicros: number }
  | { redeemed: false; reason: "unknown" | "redeemed" }
  | { redeemed: false; reason: "above_maximum"; balanceMicros: number; amountMicros: number };

export interface CreditCodeStore {
  createCreditCodes(
    codes: Array<
      Omit<CreditCode, "redeemedAt" | "redeemedBy" | "revokedAt"> & { codeHash: string }
    >,
    audit?: AuditOrigin,
  ): Promise<void>;
  /** Codes newest first; `after` is the `[createdAt, id]` of the last code of the previous page. */
  listCreditCodes(options: {
    limit: number;
    after?: { createdAt: number; id: string };
    status?: CreditCodeStatus;
    now: number;
  }): Promise<CreditCode[]>;
  findCreditCode(id: string): Promise<CreditCode | undefined>;
  /** Revokes a code that is neither redeemed nor revoked; returns the code as it is now. */
  revokeCreditCode(id: string, at: number, audit?: AuditOrigin): Promise<CreditCode | undefined>;
  /**
   * Redeems the code with this hash for the account, once: marks it redeemed and credits the
   * account through the ledger (kind `credit_code`) in one transaction. A code that is unknown,
   * revoked or expired is `unknown`; one redeemed before is `redeemed`; a credit that would lift
   * the balance above `maxBalanceMicros` changes nothing.
   */
  redeemCreditCode(input: {
    codeHash: string;
    accountId: string;
    at: number;
    maxBalanceMicros: number;
    /** Who redeems: a `credit_code.redeem` event in the redemption's transaction. */
    audit?: AuditOrigin;
  }): Promise<RedeemResult>;
}
