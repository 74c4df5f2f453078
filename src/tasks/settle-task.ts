/**
 * @module tasks/settle-task
 * The money of a finished video task. A task that succeeded is charged price-per-second (by its
 * resolution) × the seconds the vendor reports it generated, or the requested `duration` when
 * the vendor reports none, never more than the hold (a longer video is charged at the hold and
 * the difference recorded as an overrun), at the price it was held at (a reload that changes
 * or removes the model does not change it). A task that failed, was canceled or expired is
 * charged nothing: its whole hold is released. One usage record per task, written with the charge.
 */
import { OVERRUN_ITEM, priceWithinHold } from "../billing/index.ts";
import type { CatalogModel } from "../catalog/index.ts";
import type { Usage } from "../spec/index.ts";
import type { TaskStore, UsageRecord, VideoTask } from "../store/index.ts";

export const VIDEO_ENDPOINT = "/v1/videos/generations";

/** The seconds a successful task is billed for. */
export function billedSeconds(task: VideoTask, reportedSeconds: number | undefined): number {
  return reportedSeconds !== undefined && Number.isFinite(reportedSeconds) && reportedSeconds > 0
    ? Math.ceil(reportedSeconds)
    : task.durationSeconds;
}

function record(task: VideoTask, now: number): UsageRecord {
  return {
    requestId: task.id,
    accountId: task.accountId,
    keyId: task.keyId,
    model: task.model,
    endpoint: VIDEO_ENDPOINT,
    status: "failed",
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    images: 0,
    videoSeconds: 0,
    characters: 0,
    costMicros: 0,
    heldMicros: task.holdMicros,
    usageSource: null,
    upstreamRequestId: task.providerTaskId,
    latencyMs: Math.max(0, (task.finishedAt ?? now) - task.createdAt),
    ttfbMs: null,
    breakdown: null,
    createdAt: now,
    overrunMicros: 0,
    outputCapLoweredTo: null,
  };
}

/** What a settlement charged: seconds of video and micro-USD (both 0 for a release). */
export interface TaskCharge {
  seconds: number;
  costMicros: number;
}

/**
 * The task's seconds at the price it was held at. The hold is the price of the requested
 * duration at submission; a reload may since have changed the model's price, or removed the
 * model. While the catalog still prices the requested duration at the hold, its own line items
 * are used; otherwise the hold's price per second is (so a task is never billed at a price its
 * client did not see when it was submitted).
 */
function pricedAtSubmission(
  task: VideoTask,
  model: CatalogModel | undefined,
  usage: Usage,
  seconds: number,
): ReturnType<typeof priceWithinHold> {
  if (model && catalogPriceOfRequest(task, model) === task.holdMicros)
    return priceWithinHold(model, usage, task.holdMicros);
  const full = Math.round((task.holdMicros * seconds) / Math.max(1, task.durationSeconds));
  const costMicros = Math.min(full, task.holdMicros);
  const overrunMicros = full - costMicros;
  const breakdown: Record<string, number> = { video_seconds_at_submission_price: costMicros };
  if (overrunMicros > 0) breakdown[OVERRUN_ITEM] = -overrunMicros;
  return { costMicros, breakdown, overrunMicros, lineItemsTotal: full };
}

/**
 * What the catalog prices the task's requested duration at now; undefined when it no longer
 * prices its resolution (a reload dropped it): the task is then priced from its hold.
 */
function catalogPriceOfRequest(task: VideoTask, model: CatalogModel): number | undefined {
  const requested: Usage = {
    media: {
      videoSeconds: { seconds: task.durationSeconds, resolution: task.resolution },
      source: "estimated",
    },
  };
  try {
    return priceWithinHold(model, requested, Number.MAX_SAFE_INTEGER).costMicros;
  } catch {
    return undefined;
  }
}

/**
 * Charges or releases a task that reached its final state (billing state `finalizing`).
 * Idempotent: a task already settled is left alone. Returns what it charged.
 */
export async function settleFinishedTask(
  store: TaskStore,
  task: VideoTask,
  model: CatalogModel | undefined,
  now: number,
): Promise<TaskCharge> {
  // Until the charge, `billedSeconds` holds what the vendor reported (finishVideoTask).
  const reportedSeconds = task.billedSeconds ?? undefined;
  const usageRecord = record(task, now);
  if (task.status !== "succeeded") {
    await store.settleVideoTask(task.id, usageRecord, {
      billedSeconds: null,
      reason: `video task ${task.status}`,
    });
    return { seconds: 0, costMicros: 0 };
  }
  const seconds = billedSeconds(task, reportedSeconds);
  const usage: Usage = {
    media: {
      videoSeconds: { seconds, resolution: task.resolution },
      source: reportedSeconds === undefined ? "estimated" : "upstream",
    },
  };
  const priced = pricedAtSubmission(task, model, usage, seconds);
  await store.settleVideoTask(
    task.id,
    {
      ...usageRecord,
      status: "succeeded",
      videoSeconds: seconds,
      costMicros: priced.costMicros,
      usageSource: reportedSeconds === undefined ? "estimated" : "upstream",
      breakdown: priced.breakdown,
      overrunMicros: priced.overrunMicros,
    },
    {
      billedSeconds: seconds,
      reason: seconds === task.durationSeconds ? null : `vendor reported ${seconds} s`,
    },
  );
  return { seconds, costMicros: priced.costMicros };
}
