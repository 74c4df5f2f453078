/**
 * @module store/types
 * Repository interfaces the rest of the gateway depends on. `sql-store.ts` implements them over
 * Kysely for SQLite and PostgreSQL. Video tasks have theirs in `task-types.ts`.
 */
import type { AuditOrigin, AuditStore } from "./audit-types.ts";
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

export interface KeyStore {
  /** With `audit`, the `key.create` event is written in the same transaction as the key. */
  createKey(input: NewApiKey, audit?: AuditOrigin): Promise<ApiKeyRecord>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findKeyById(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
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
    requestId?: string;
    /** Highest balance allowed after the entry (`Number.MAX_SAFE_INTEGER` when absent). */
    maxBalanceMicros?: number;
    /** Who made it: an `account.credit` / `account.debit` event in the entry's transaction. */
    audit?: AuditOrigin;
  }): Promise<{ entry: LedgerEntry; balanceMicros: number }>;
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
  /** A charge larger than the hold it settled. */
  | "charge_above_hold"
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
    BudgetStore {
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

export interface UsageRecord {
  requestId: string;
  accountId: string;
  keyId: string | null;
  model: string;
  endpoint: string;
  /** `interrupted`: the upstream broke, or the gateway died, after units were delivered. */
  status: "succeeded" | "failed" | "aborted" | "interrupted";
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  images: number;
  videoSeconds: number;
  characters: number;
  costMicros: number;
  heldMicros: number;
  usageSource: "upstream" | "estimated" | null;
  upstreamRequestId: string | null;
  latencyMs: number | null;
  ttfbMs: number | null;
  breakdown: Record<string, number> | null;
  createdAt: number;
  /** Priced cost above the hold, which was not charged (a vendor that overran its cap). */
  overrunMicros?: number;
  /** The output cap sent upstream when it was lowered to fit the balance. */
  outputCapLoweredTo?: number | null;
  /** The end user the client named for the request (OpenAI `user`, Anthropic `metadata.user_id`). */
  endUser?: string | null;
  /** The request's `metadata` string pairs (at most 16). */
  metadata?: Record<string, string> | null;
}

export interface HoldInput {
  requestId: string;
  accountId: string;
  keyId: string;
  model: string;
  endpoint: string;
  /** The gateway process placing the hold (its in-flight row names it). */
  instanceId: string;
  amountMicros: number;
  /** The least the request is charged if the process dies before settling it: its input. */
  floorMicros: number;
  /** Spend caps the hold must fit under (the key's and its ancestors'), checked with it. */
  spendLimits?: readonly SpendLimitCheck[];
}

/** A key's spend cap as one hold checks it. */
export interface SpendLimitCheck {
  keyId: string;
  limitMicros: number;
  /** Start of the current period, Unix ms (0 for a lifetime cap). */
  since: number;
}

/** The cap a hold did not fit under, with what its period had spent and held. */
export interface SpendLimitRefusal extends SpendLimitCheck {
  spentMicros: number;
  heldMicros: number;
}

/** What a long stream has delivered so far, written now and then (see `checkpoint`). */
export interface UsageCheckpoint {
  requestId: string;
  /** Cost of what was delivered, already capped at the hold. */
  costMicros: number;
  /** Token and media counts behind it, for the usage record a restart would write. */
  record: Pick<
    UsageRecord,
    | "inputTokens"
    | "cachedInputTokens"
    | "cacheWriteTokens"
    | "outputTokens"
    | "reasoningTokens"
    | "images"
    | "videoSeconds"
    | "characters"
    | "breakdown"
  >;
}

/** Which in-flight requests belong to processes that are gone. */
export interface DeadRequestFilter {
  /** Every in-flight request (a single-process database at start-up). */
  all?: boolean;
  /** Requests of this instance id (a restarted process with a stable id). */
  instanceId?: string;
  /** Requests of instances whose heartbeat is older than this (Unix ms). */
  heartbeatBefore?: number;
}

export type HoldResult =
  | { placed: true }
  | {
      placed: false;
      /** What could still be held: of the balance, or under `spendLimit` when that refused. */
      availableMicros: number;
      /** Set when a spend cap refused the hold (the balance may have covered it). */
      spendLimit?: SpendLimitRefusal;
    };

export interface UsageQuery {
  /** One account's records; every account's when absent (the admin report). */
  accountId?: string;
  from?: number;
  to?: number;
  model?: string;
  keyId?: string;
  /** The end user the client named (`user`, `metadata.user_id`). */
  endUser?: string;
  limit: number;
  /** Records after this one in the order newest first, request id descending on a tie. */
  after?: { createdAt: number; requestId: string };
  /** Groups after this group key (groups come in the order of their keys). */
  afterGroup?: string;
}

export type UsageGroupBy = "day" | "model" | "key" | "account";

export interface UsageGroup {
  group: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  images: number;
  videoSeconds: number;
  characters: number;
  costMicros: number;
}

export interface BillingStore {
  /** Holds `amountMicros` if the available balance covers it, atomically. */
  placeHold(input: HoldInput): Promise<HoldResult>;
  /**
   * Charges the request's cost, returns its hold and writes its usage record, in one
   * transaction. Idempotent per request id: a second call changes nothing.
   */
  settle(record: UsageRecord): Promise<{ alreadySettled: boolean }>;
  /** Returns the hold without charging and records the failed request. Idempotent. */
  releaseHold(record: UsageRecord, reason: string): Promise<void>;
  /** Releases holds with no charge or release, created before `createdBefore`. */
  releaseOpenHolds(createdBefore: number, reason: string): Promise<number>;
  /**
   * The request starts delivering (a stream's first byte): from now on a restart charges it at
   * least `floorMicros` (its input). Before, a crash charges it nothing, like any failed request.
   * Holds in the table have had their row since the hold (for the hold's release); holds kept
   * in memory (SQLite) get theirs here, once.
   */
  recordInflight(requestId: string, floorMicros: number): Promise<void>;
  /** Records what a long request has delivered so far (the charge if the process dies now). */
  checkpoint(checkpoint: UsageCheckpoint): Promise<void>;
  /**
   * Settles the in-flight requests of dead processes: each is charged the larger of its input
   * and its last checkpoint (never more than its hold), the rest of its hold is released, and a
   * usage record says `interrupted`. Returns how many were settled.
   */
  settleDeadRequests(filter: DeadRequestFilter): Promise<number>;
  /** Marks `instanceId` alive now (PostgreSQL instances check each other's heartbeats). */
  heartbeat(instanceId: string, startedAt: number): Promise<void>;
  listUsage(query: UsageQuery): Promise<UsageRecord[]>;
  groupUsage(query: UsageQuery, by: UsageGroupBy): Promise<UsageGroup[]>;
  findUsage(requestId: string): Promise<UsageRecord | undefined>;
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
