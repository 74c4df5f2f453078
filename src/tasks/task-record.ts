/**
 * @module tasks/task-record
 * The video task as clients see it (`GET /v1/videos/generations/{id}`, the list, the webhook
 * payload): the vendor's own task record as it last came, with the platform's fields over it —
 * the platform id, the normalized `status`, the catalog `model`, times in Unix seconds, the
 * result (`content.video_url`, `usage`, `seed`), the billing state and amount, and the webhook
 * delivery state. docs/videos.md documents each field.
 */
import type { VideoTask } from "../store/index.ts";

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** The vendor's own status word (`SUCCEEDED`, `done`, …), wherever its record keeps it. */
function vendorStatus(native: Record<string, unknown>): string | null {
  const output = objectOf(native.output);
  const status = output.task_status ?? native.status;
  return typeof status === "string" ? status : null;
}

/** The seed the task ran with: the vendor's, else the one the client asked for. */
function seedOf(task: VideoTask): number | null {
  if (task.seed !== null) return task.seed;
  const body = objectOf(task.requestBody);
  const seed = objectOf(body.parameters).seed ?? body.seed;
  return typeof seed === "number" ? seed : null;
}

export function renderVideoTask(task: VideoTask): Record<string, unknown> {
  const native = objectOf(task.providerRecord);
  const final = task.finishedAt !== null;
  const billed = task.billingState === "settled" ? task.billedSeconds : null;
  return {
    ...native,
    id: task.id,
    object: "video.generation",
    provider_task_id: task.providerTaskId,
    provider_status: vendorStatus(native),
    model: task.model,
    status: task.status,
    progress: task.status === "succeeded" ? 100 : task.progress,
    created_at: seconds(task.createdAt),
    finished_at: seconds(task.finishedAt),
    duration: task.durationSeconds,
    resolution: task.resolution,
    aspect_ratio: task.aspectRatio,
    content: task.videoUrl ? { video_url: task.videoUrl } : null,
    ...(final
      ? {
          usage:
            native.usage ??
            task.usage ??
            (billed === null ? null : { duration: billed, video_count: 1 }),
          seed: seedOf(task),
        }
      : {}),
    error: task.error,
    billing: {
      state: task.billingState,
      held_micros: task.holdMicros,
      cost_micros: task.costMicros,
      billed_seconds: billed,
    },
    webhook: task.webhookUrl
      ? {
          url: task.webhookUrl,
          state: task.webhookState,
          attempts: task.webhookAttempts.map((attempt) => ({
            at: seconds(attempt.at),
            ...(attempt.status === undefined ? {} : { status: attempt.status }),
            ...(attempt.error === undefined ? {} : { error: attempt.error }),
            duration_ms: attempt.durationMs,
          })),
        }
      : null,
  };
}
