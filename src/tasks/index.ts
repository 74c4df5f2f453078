/**
 * @module tasks
 * Background work: the video task engine (polling, exactly-once finalization, settlement,
 * expiry, webhook delivery) and what the endpoints need of it.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { VideoTask } from "../store/index.ts";

export * from "./budget-alerts.ts";
export * from "./poll-schedule.ts";
export * from "./settle-task.ts";
export * from "./task-models.ts";
export * from "./task-record.ts";
export * from "./video-engine.ts";

/** What the video endpoints need of the task machinery (built in `main.ts`). */
export interface VideoTaskService {
  /** Runs the engine soon (a task was submitted). */
  kick(): void;
  /** Moves a task to a final state decided by the gateway (cancel, failed submission). */
  finish(
    task: VideoTask,
    status: "canceled" | "failed",
    error?: { code: string; message: string },
  ): Promise<boolean>;
  /**
   * The route `task` was submitted to, even when a reload has since changed or removed it (the
   * engine follows it there to its end): for a cancel and for marking a sandbox task.
   */
  routeOf(task: VideoTask): ResolvedRoute | undefined;
  /** Remembers the route a task of `modelId` is being submitted to (see `routeOf`). */
  remember(modelId: string, route: ResolvedRoute): void;
  /** Refuses a webhook URL the policy does not allow (throws `invalid_parameter`). */
  checkWebhookUrl(url: string): Promise<void>;
  /** A new per-account webhook signing secret. */
  newWebhookSecret(): string;
  /** A task the vendor has not acknowledged by then is failed (the process died mid-way). */
  readonly submitGraceMs: number;
  /** The first poll comes this long after the submission. */
  readonly firstPollMs: number;
  /** Runs one round of the engine now (tests, operators). */
  runOnce(): Promise<void>;
  /** Stops the engine (shutdown). */
  close(): Promise<void>;
}
