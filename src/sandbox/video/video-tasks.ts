/**
 * @module sandbox/video/video-tasks
 * The in-memory task store behind both video emulations. A task's state is never stored: it is
 * read off the sandbox clock (`/__sandbox/clock` moves it forward) from the task's plan, so a
 * task queued at `submittedMs` is PENDING for the first quarter of its run, RUNNING until
 * `endMs`, then SUCCEEDED or FAILED; cancelled while PENDING it is CANCELED; past
 * {@link TASK_TTL_MS} it is EXPIRED (DashScope's `UNKNOWN`, xAI's `expired`). At most
 * {@link TASK_CAPACITY} tasks are kept: the oldest finished ones go first, then the oldest.
 */
import { randomUUID } from "node:crypto";
import type { LinkSigner } from "../signed-links.ts";

/** Task ids and results live 24 h, as DashScope's do. */
export const TASK_TTL_MS = 24 * 60 * 60 * 1000;
/** Tasks kept per sandbox server. */
export const TASK_CAPACITY = 1000;
/** Share of a task's run spent queued (PENDING) before it starts (RUNNING). */
export const PENDING_SHARE = 0.25;

export type TaskPhase = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELED" | "EXPIRED";

export interface TaskFailure {
  code: string;
  message: string;
  /** Fail as the task leaves the queue (a check the vendor makes late), not at the end. */
  onStart?: boolean;
}

export interface TaskPlan {
  /** Seconds from submission to the end of the run (PENDING, then RUNNING). */
  seconds: number;
  failure?: TaskFailure;
  /** The output is blocked by moderation (each vendor reports it in its own way). */
  moderated?: boolean;
  /** Never finish: RUNNING until the task expires. */
  stuck?: boolean;
  /** Answer 429 to this many polls first. */
  throttledPolls?: number;
}

export interface VideoTask<Job> {
  id: string;
  job: Job;
  plan: TaskPlan;
  submittedMs: number;
  /** When it leaves the queue. */
  scheduledMs: number;
  /** When it finishes (if it ever does). */
  endMs: number;
  canceledMs?: number;
  throttledPolls: number;
}

export interface TaskView {
  phase: TaskPhase;
  /** When it left the queue, once it has. */
  scheduledMs?: number;
  /** When it finished (or was cancelled), once it has. */
  endMs?: number;
  /** Percent done, 0–100 (100 only once finished). */
  progress: number;
}

const FINISHED: ReadonlySet<TaskPhase> = new Set(["SUCCEEDED", "FAILED", "CANCELED", "EXPIRED"]);

export function isFinished(phase: TaskPhase): boolean {
  return FINISHED.has(phase);
}

/**
 * The sandbox clock in milliseconds: the real time plus the whole seconds the clock was moved
 * forward. The advance is read between two real readings of the same second, so it is exact.
 */
export function sandboxNowMs(links: LinkSigner): number {
  for (;;) {
    const before = Date.now();
    const seconds = links.nowSeconds();
    const after = Date.now();
    const second = Math.floor(before / 1000);
    if (second === Math.floor(after / 1000)) return after + (seconds - second) * 1000;
  }
}

/** DashScope's task timestamps, e.g. `2025-07-27 21:05:15.212` (UTC here; no zone is sent). */
export function formatTaskTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 23);
}

export function viewTask<Job>(task: VideoTask<Job>, nowMs: number): TaskView {
  if (nowMs - task.submittedMs >= TASK_TTL_MS) return { phase: "EXPIRED", progress: 0 };
  if (task.canceledMs !== undefined) {
    return { phase: "CANCELED", endMs: task.canceledMs, progress: 0 };
  }
  const { scheduledMs, endMs, plan } = task;
  if (nowMs < scheduledMs) return { phase: "PENDING", progress: 0 };
  if (plan.failure?.onStart) {
    return { phase: "FAILED", scheduledMs, endMs: scheduledMs, progress: 100 };
  }
  if (plan.stuck || nowMs < endMs) {
    const share = endMs > scheduledMs ? (nowMs - scheduledMs) / (endMs - scheduledMs) : 1;
    return { phase: "RUNNING", scheduledMs, progress: Math.min(99, Math.floor(share * 100)) };
  }
  return { phase: plan.failure ? "FAILED" : "SUCCEEDED", scheduledMs, endMs, progress: 100 };
}

/** The tasks of one sandbox server, on its clock. */
export class VideoTaskStore<Job> {
  readonly #tasks = new Map<string, VideoTask<Job>>();
  readonly #links: LinkSigner;

  constructor(links: LinkSigner) {
    this.#links = links;
  }

  now(): number {
    return sandboxNowMs(this.#links);
  }

  get size(): number {
    return this.#tasks.size;
  }

  create(job: Job, plan: TaskPlan): VideoTask<Job> {
    const submittedMs = this.now();
    const runMs = Math.round(plan.seconds * 1000);
    const task: VideoTask<Job> = {
      id: randomUUID(),
      job,
      plan,
      submittedMs,
      scheduledMs: submittedMs + Math.round(runMs * PENDING_SHARE),
      endMs: submittedMs + runMs,
      throttledPolls: plan.throttledPolls ?? 0,
    };
    this.#tasks.set(task.id, task);
    if (this.#tasks.size > TASK_CAPACITY) this.#evictOne(submittedMs);
    return task;
  }

  /** The task, unless unknown or evicted (an expired one is still returned: see its view). */
  get(id: string): VideoTask<Job> | undefined {
    return this.#tasks.get(id);
  }

  view(task: VideoTask<Job>): TaskView {
    return viewTask(task, this.now());
  }

  /** Cancels a PENDING task; false (and no change) in any other state. */
  cancel(task: VideoTask<Job>): boolean {
    const now = this.now();
    if (viewTask(task, now).phase !== "PENDING") return false;
    task.canceledMs = now;
    return true;
  }

  /** True (and counted) while the task still has polls to refuse with 429. */
  takeThrottledPoll(task: VideoTask<Job>): boolean {
    if (task.throttledPolls <= 0) return false;
    task.throttledPolls--;
    return true;
  }

  /** Drops the oldest finished task, or the oldest of all when none has finished. */
  #evictOne(nowMs: number): void {
    let victim: string | undefined;
    for (const [id, task] of this.#tasks) {
      if (isFinished(viewTask(task, nowMs).phase)) {
        victim = id;
        break;
      }
    }
    victim ??= this.#tasks.keys().next().value;
    if (victim !== undefined) this.#tasks.delete(victim);
  }
}

/** Polls allowed per key in any one second (DashScope's task-query limit: 20 QPS). */
export const POLLS_PER_SECOND = 20;
/** Keys whose recent polls are remembered (the oldest are forgotten first). */
export const POLL_KEYS_CAPACITY = 10_000;

/** A sliding one-second window of polls per key (real time: it limits real request rates). */
export class PollLimiter {
  readonly #recent = new Map<string, number[]>();

  constructor(readonly perSecond: number = POLLS_PER_SECOND) {}

  /** Counts the poll and returns true, or returns false when the key is over its limit. */
  allow(key: string, nowMs: number = Date.now()): boolean {
    const times = (this.#recent.get(key) ?? []).filter((at) => nowMs - at < 1000);
    const allowed = times.length < this.perSecond;
    if (allowed) times.push(nowMs);
    this.#recent.delete(key);
    this.#recent.set(key, times);
    if (this.#recent.size > POLL_KEYS_CAPACITY) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
    return allowed;
  }
}
