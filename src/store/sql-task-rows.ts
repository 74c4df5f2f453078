/**
 * @module store/sql-task-rows
 * Video task rows and the domain objects they hold: reading a row (JSON columns parsed, never
 * failing on bad data) and the row of a new task.
 */
import type { Selectable } from "kysely";
import type { VideoTasksTable } from "./schema.ts";
import type {
  NewVideoTask,
  VideoBillingState,
  VideoTask,
  VideoTaskState,
  WebhookAttemptRecord,
  WebhookState,
} from "./task-types.ts";

export function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

export const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

export function fromRow(row: Selectable<VideoTasksTable>): VideoTask {
  const attempts = parse(row.webhook_attempts);
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    route: row.route,
    upstreamModel: row.upstream_model,
    providerTaskId: row.provider_task_id,
    status: row.status as VideoTaskState,
    requestBody: parse(row.request_body),
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    durationSeconds: Number(row.duration_seconds),
    resolution: row.resolution,
    aspectRatio: row.aspect_ratio,
    holdMicros: Number(row.hold_micros),
    billingState: row.billing_state as VideoBillingState,
    costMicros: Number(row.cost_micros),
    billedSeconds: row.billed_seconds === null ? null : Number(row.billed_seconds),
    providerRecord: parse(row.provider_record),
    progress: row.progress === null ? null : Number(row.progress),
    videoUrl: row.video_url,
    seed: row.seed === null ? null : Number(row.seed),
    usage: parse(row.usage),
    error:
      row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
    webhookUrl: row.webhook_url,
    webhookState: row.webhook_state as WebhookState,
    webhookAttempts: Array.isArray(attempts) ? (attempts as WebhookAttemptRecord[]) : [],
    webhookNextAt: row.webhook_next_at === null ? null : Number(row.webhook_next_at),
    nextPollAt: Number(row.next_poll_at),
    polls: Number(row.polls),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}

export function newRow(task: NewVideoTask, now: number): VideoTasksTable {
  return {
    id: task.id,
    account_id: task.accountId,
    key_id: task.keyId,
    model: task.model,
    route: task.route,
    upstream_model: task.upstreamModel,
    provider_task_id: null,
    status: "queued",
    request_body: JSON.stringify(task.requestBody),
    idempotency_key: task.idempotencyKey,
    request_hash: task.requestHash,
    duration_seconds: task.durationSeconds,
    resolution: task.resolution,
    aspect_ratio: task.aspectRatio,
    hold_micros: task.holdMicros,
    billing_state: "held",
    cost_micros: 0,
    billed_seconds: null,
    provider_record: null,
    progress: null,
    video_url: null,
    seed: null,
    usage: null,
    error_code: null,
    error_message: null,
    webhook_url: task.webhookUrl,
    webhook_state: "none",
    webhook_attempts: null,
    webhook_next_at: null,
    // Before the vendor acknowledges it (`markVideoTaskSubmitted`), a poll at this time finds a
    // submission the process did not live to finish.
    next_poll_at: task.nextPollAt,
    polls: 0,
    lease_owner: null,
    lease_until: 0,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
}
