/**
 * @module store/billing-types
 * The money paths' store interface: holds, settlement, in-flight requests and their recovery,
 * and usage records with their reports. Implemented by `sql-billing.ts` (and `pg-billing.ts`'s
 * single-statement hold and settlement on PostgreSQL).
 */
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
  /**
   * The id of the ledger row that closes the request. The store sets it on the first attempt
   * to write the closing, so a later attempt with the same record can tell its own closing
   * (committed, its reply lost) from one written by another path (a recovery, a sweep).
   */
  closingId?: string;
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
  /**
   * Requests of instances whose heartbeat is older than this many milliseconds, by the database's
   * clock (the one clock every instance shares; theirs may drift apart).
   */
  heartbeatOlderThanMs?: number;
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
   * transaction. Idempotent per request id: a second call changes nothing. `ownClosing` says
   * whether a request found closed was closed by this record (an earlier attempt of the same
   * settlement that committed) rather than by another path.
   */
  settle(record: UsageRecord): Promise<{ alreadySettled: boolean; ownClosing: boolean }>;
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
  /**
   * Records what a long request has delivered so far (the charge if the process dies now).
   * False when the request has no in-flight row to record it on: it was settled by another path
   * (an instance that took this one for dead), or its row was never written.
   */
  checkpoint(checkpoint: UsageCheckpoint): Promise<boolean>;
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
