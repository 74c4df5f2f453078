/**
 * @module store/task-types
 * The repository interface of asynchronous video tasks (src/tasks) and their webhooks:
 * creation with a durable hold, leases for polling and delivery, exactly-once finalization.
 */
import type { AuditOrigin } from "./audit-types.ts";
import type { SpendLimitCheck, SpendLimitRefusal, UsageRecord } from "./billing-types.ts";

/** Normalized states of a video task (the vendor's own record is kept beside them). */
export type VideoTaskState = "queued" | "running" | "succeeded" | "failed" | "canceled" | "expired";

/**
 * Where a task's billing stands: `held` (the hold is open), `finalizing` (the task reached its
 * final state; its charge or release is under way, and a restart finishes it), `settled`,
 * `released`.
 */
export type VideoBillingState = "held" | "finalizing" | "settled" | "released";

export type WebhookState = "none" | "pending" | "delivered" | "failed";

/** One delivery attempt of a task's webhook, as recorded on the task. */
export interface WebhookAttemptRecord {
  at: number;
  status?: number;
  error?: string;
  durationMs: number;
}

export interface VideoTask {
  id: string;
  accountId: string;
  keyId: string | null;
  model: string;
  /** `vendor:upstream_model` of the route that took the task. */
  route: string;
  upstreamModel: string;
  providerTaskId: string | null;
  status: VideoTaskState;
  requestBody: unknown;
  idempotencyKey: string | null;
  requestHash: string;
  durationSeconds: number;
  resolution: string;
  aspectRatio: string | null;
  holdMicros: number;
  billingState: VideoBillingState;
  costMicros: number;
  billedSeconds: number | null;
  providerRecord: unknown;
  progress: number | null;
  videoUrl: string | null;
  seed: number | null;
  usage: unknown;
  error: { code: string; message: string } | null;
  webhookUrl: string | null;
  webhookState: WebhookState;
  webhookAttempts: WebhookAttemptRecord[];
  webhookNextAt: number | null;
  nextPollAt: number;
  polls: number;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

export type NewVideoTask = Pick<
  VideoTask,
  | "id"
  | "accountId"
  | "keyId"
  | "model"
  | "route"
  | "upstreamModel"
  | "requestBody"
  | "idempotencyKey"
  | "requestHash"
  | "durationSeconds"
  | "resolution"
  | "aspectRatio"
  | "holdMicros"
  | "webhookUrl"
  | "nextPollAt"
> & {
  /** Spend caps the task's hold must fit under (see HoldInput). */
  spendLimits?: readonly SpendLimitCheck[];
};

export type CreateTaskResult =
  | { kind: "created"; task: VideoTask }
  /** The account already has a task with this idempotency key. */
  | { kind: "existing"; task: VideoTask }
  | { kind: "insufficient_balance"; availableMicros: number }
  /** A key's spend cap has no room for the task's hold. */
  | { kind: "spend_limit"; spendLimit: SpendLimitRefusal };

/** What a poll learned about a task that is not final yet. */
export interface VideoTaskProgress {
  status: "queued" | "running";
  providerRecord?: unknown;
  progress?: number | null;
  nextPollAt: number;
}

/** The final state of a task, as the vendor (or the gateway: expiry) reported it. */
export interface VideoTaskOutcome {
  status: "succeeded" | "failed" | "canceled" | "expired";
  providerRecord?: unknown;
  videoUrl?: string | null;
  seed?: number | null;
  usage?: unknown;
  error?: { code: string; message: string } | null;
  /** Seconds of video the vendor reports (kept in `billedSeconds` until the charge). */
  reportedSeconds?: number | null;
  finishedAt: number;
}

export interface TaskPage {
  limit: number;
  /** Only tasks created before this one (its id), newest first. */
  after?: string;
  /** Only tasks after this sort key (a cursor's: created_at, then id, both descending). */
  afterKey?: { createdAt: number; id: string };
}

export interface TaskStore {
  /**
   * Creates the task and places its hold in one transaction. The hold is durable (a ledger
   * entry, on SQLite too): a task outlives the process. With an idempotency key the account
   * already used, nothing is created and the earlier task is returned.
   */
  createVideoTask(task: NewVideoTask): Promise<CreateTaskResult>;
  /**
   * The vendor took the task: its id and first record, unless the task was finished meanwhile
   * (taken for an interrupted submission) or the id is another task's (see `SubmissionMark`).
   */
  markVideoTaskSubmitted(
    id: string,
    submission: { providerTaskId: string; providerRecord: unknown; nextPollAt: number },
  ): Promise<SubmissionMark>;
  /**
   * A submission still under way: the task, not yet acknowledged by the vendor, is not taken for
   * an interrupted one before `nextPollAt`.
   */
  extendVideoTaskSubmission(id: string, nextPollAt: number): Promise<void>;
  /** Frees the task's idempotency key (its submission failed: a retry may create another). */
  releaseIdempotencyKey(id: string): Promise<void>;
  /** A task of the account, by its id or by the vendor's task id. */
  findVideoTask(accountId: string, id: string): Promise<VideoTask | undefined>;
  findVideoTaskById(id: string): Promise<VideoTask | undefined>;
  listVideoTasks(accountId: string, page: TaskPage): Promise<VideoTask[]>;
  /**
   * Leases up to `limit` unfinished tasks due for a poll to `owner` until `now + leaseMs`; a
   * task leased by a live owner is skipped, one whose lease ran out is taken over.
   */
  claimDueVideoTasks(
    now: number,
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<VideoTask[]>;
  /**
   * Ends leases of processes that are gone: every lease (a database only this process uses),
   * or those of `owner` (a restarted instance with a stable id).
   */
  clearVideoTaskLeases(owner?: string): Promise<number>;
  /** Records a poll of a task that is not final (only while `owner` holds its lease). */
  recordVideoTaskProgress(id: string, owner: string, progress: VideoTaskProgress): Promise<void>;
  /**
   * Moves a task to its final state, once: returns false when it already was final (another
   * poller, a cancel). The winner then settles or releases it (`settleVideoTask`).
   */
  finishVideoTask(id: string, outcome: VideoTaskOutcome): Promise<boolean>;
  /**
   * Charges a finished task (its usage record and ledger charge, the rest of the hold released)
   * or releases its whole hold (`record.costMicros` 0), and marks it settled or released; one
   * transaction, idempotent.
   */
  settleVideoTask(
    id: string,
    record: UsageRecord,
    result: { billedSeconds: number | null; reason: string | null },
  ): Promise<void>;
  /** How many tasks are queued and running now (one indexed count, for the metrics). */
  countUnfinishedVideoTasks(): Promise<{ queued: number; running: number }>;
  /** Tasks whose final state was recorded but whose charge or release was not (a crash). */
  listFinalizingVideoTasks(limit: number): Promise<VideoTask[]>;
  /** Leases tasks whose webhook is due to `owner` (as `claimDueVideoTasks`). */
  claimDueWebhooks(
    now: number,
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<VideoTask[]>;
  /**
   * Appends a delivery attempt and, while `owner` still holds the delivery's lease, sets the
   * next state (`pending` with `nextAt`, or final) and ends the lease. An attempt that outlived
   * its lease only adds itself to the list, or, a success, marks the delivery delivered.
   */
  recordWebhookAttempt(
    id: string,
    owner: string,
    attempt: WebhookAttemptRecord,
    next: { state: WebhookState; nextAt: number | null },
  ): Promise<void>;
  /** The account's webhook signing secret, created with `create()` on first use. */
  webhookSecret(accountId: string, create: () => string): Promise<string>;
  /** With `audit`, a `webhook_secret.rotate` event (never the secret) in the same transaction. */
  rotateWebhookSecret(accountId: string, secret: string, audit?: AuditOrigin): Promise<string>;
}

/**
 * What became of a vendor's acknowledgement: `followed`; `finished` (the task was given up as
 * interrupted meanwhile); `duplicate` (another task at the same route already follows this
 * vendor task id: a vendor that repeats an id would otherwise have one video charged twice).
 * Only `followed` writes anything.
 */
export type SubmissionMark = "followed" | "finished" | "duplicate";
