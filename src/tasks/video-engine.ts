/**
 * @module tasks/video-engine
 * The background engine of video tasks: on every tick it finishes charges a crash left undone,
 * leases the tasks due for a poll and asks their vendors how they stand, moves the finished
 * ones to their final state exactly once (a conditional transition in the store) and settles or
 * releases their holds, expires tasks stuck past the limit, and delivers due webhooks with
 * retries. Everything lives in the store, so a restarted gateway simply goes on; the lease is
 * the only coordination, so several instances can share the work.
 */
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { FINAL_VIDEO_STATUSES, UpstreamError, type VideoModel } from "../spec/index.ts";
import type { TaskStore, VideoTask } from "../store/index.ts";
import { nextPollDelayMs, VendorRateLimits } from "./poll-schedule.ts";
import { settleFinishedTask, type TaskCharge } from "./settle-task.ts";
import { renderVideoTask } from "./task-record.ts";

export interface VideoEngineOptions {
  /** How often the engine looks for due work. */
  tickMs: number;
  pollMinIntervalMs: number;
  pollMaxIntervalMs: number;
  /** A task not final after this long is `expired` and its hold released. */
  maxAgeMs: number;
  /** A task the vendor never acknowledged (the process died mid-submission) fails after this. */
  submitGraceMs: number;
  /** How long a lease on a task lasts (a dead instance's leases run out after it). */
  leaseMs: number;
  /** How long a webhook attempt's lease lasts: longer than an attempt may take, so no other instance starts it twice. */
  webhookLeaseMs?: number;
  /** Task queries per second per vendor, from this instance. */
  vendorPollsPerSecond(vendor: string): number;
  /** Tasks (and webhooks) taken per tick. */
  batchSize: number;
  /**
   * Whether this process is the only one using the database (SQLite): then every lease found at
   * start-up is a dead process's and is ended at once; otherwise only this instance id's own.
   */
  singleProcess: boolean;
}

/** Delivers one webhook event; `ok` for a 2xx answer. */
export interface WebhookDispatcher {
  deliver(event: { url: string; body: string; secret: string; eventId: string }): Promise<{
    ok: boolean;
    status?: number;
    error?: string;
    durationMs: number;
  }>;
  /** The delay before attempt `attempt + 1`, after `attempt` failed ones. */
  retryDelayMs(attempt: number): number;
  /** Whether to stop retrying a delivery first tried at `firstAt`. */
  givesUp(firstAt: number, now: number): boolean;
  /** A new per-account signing secret. */
  newSecret(): string;
}

/** What the engine tells the metrics (the gateway's metrics satisfy it). */
export interface TaskMetrics {
  videoTaskFinished(facts: { status: string }): void;
  videoTaskSettled(facts: {
    model: string;
    vendor: string;
    seconds: number;
    costMicros: number;
  }): void;
  webhookAttempt(outcome: "delivered" | "failed" | "gave_up"): void;
}

export interface VideoEngineDeps {
  store: TaskStore;
  models: {
    get(id: string): CatalogModel | undefined;
    /** The route a task was submitted to, when the catalog may have changed since (a reload). */
    routeOf?(task: VideoTask): ResolvedRoute | undefined;
  };
  videoModel(route: ResolvedRoute): VideoModel | undefined;
  webhooks: WebhookDispatcher;
  logger: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
  clock: () => number;
  /** Names this instance in leases. */
  instanceId: string;
  options: VideoEngineOptions;
  metrics?: TaskMetrics;
  /** A task's charge was written (budget alerts check the account's thresholds). */
  onCharged?(charge: { accountId: string; costMicros: number }): void;
}

export interface VideoEngine {
  /** Runs a tick soon (after a submission, say). */
  kick(): void;
  /** Runs one tick now and waits for it (tests, start-up). */
  runOnce(): Promise<void>;
  /** Moves a task to a final state decided here (cancel), settling it; false if already final. */
  finish(
    task: VideoTask,
    status: "canceled" | "failed",
    error?: { code: string; message: string },
  ): Promise<boolean>;
  stop(): Promise<void>;
}

export function routeKey(route: ResolvedRoute): string {
  return `${route.vendor}:${route.upstreamModel}`;
}

/** The catalog route a task was submitted to, if the catalog still has it. */
export function routeOf(
  task: VideoTask,
  model: CatalogModel | undefined,
): ResolvedRoute | undefined {
  return model?.resolvedRoutes.find((route) => routeKey(route) === task.route);
}

export function startVideoEngine(deps: VideoEngineDeps): VideoEngine {
  const { store, options, clock, logger } = deps;
  const owner = deps.instanceId;
  const vendorLimits = new VendorRateLimits(options.vendorPollsPerSecond, clock);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<Array<Promise<void>>> | undefined;
  let stopped = false;
  /** Aborted by stop(): a vendor call that hangs must not hold up the shutdown. */
  const halt = new AbortController();
  /** Webhook attempts under way, by task id. */
  const sending = new Map<string, Promise<void>>();

  async function settle(task: VideoTask): Promise<TaskCharge> {
    const current = (await store.findVideoTaskById(task.id)) ?? task;
    const charge = await settleFinishedTask(
      store,
      current,
      deps.models.get(current.model),
      clock(),
    );
    if (charge.costMicros > 0)
      deps.onCharged?.({ accountId: current.accountId, costMicros: charge.costMicros });
    return charge;
  }

  async function finishWith(
    task: VideoTask,
    outcome: Parameters<TaskStore["finishVideoTask"]>[1],
  ): Promise<boolean> {
    const won = await store.finishVideoTask(task.id, outcome);
    if (won) {
      const charge = await settle(task);
      deps.metrics?.videoTaskFinished({ status: outcome.status });
      if (charge.seconds > 0 || charge.costMicros > 0)
        deps.metrics?.videoTaskSettled({
          model: task.model,
          vendor: task.route.split(":")[0] ?? "unknown",
          ...charge,
        });
      logger.info(
        { taskId: task.id, model: task.model, status: outcome.status },
        "video task finished",
      );
    }
    return won;
  }

  async function pollOne(task: VideoTask): Promise<void> {
    const now = clock();
    // Never past the task's expiry, whatever delay a vendor asks for (a Retry-After of years):
    // expiry is decided when the task is next claimed, and its hold is released then.
    const untilExpiry = task.createdAt + options.maxAgeMs + 1 - now;
    const later = (delayMs: number) =>
      store.recordVideoTaskProgress(task.id, owner, {
        status: task.status as "queued" | "running",
        nextPollAt: now + Math.max(0, Math.min(delayMs, untilExpiry)),
      });
    const expire = (at: number) =>
      finishWith(task, {
        status: "expired",
        error: { code: "TaskExpired", message: "The task did not finish within the time allowed." },
        finishedAt: at,
      });
    const expired = () => clock() - task.createdAt > options.maxAgeMs;
    if (now - task.createdAt > options.maxAgeMs) {
      await expire(now);
      return;
    }
    if (task.providerTaskId === null) {
      // Created but never acknowledged by the vendor: the process died mid-submission.
      await finishWith(task, {
        status: "failed",
        error: {
          code: "SubmissionInterrupted",
          message: "The task was not submitted to the vendor.",
        },
        finishedAt: now,
      });
      return;
    }
    const route = deps.models.routeOf?.(task) ?? routeOf(task, deps.models.get(task.model));
    const model = route && deps.videoModel(route);
    if (!route || !model) {
      logger.warn({ taskId: task.id, route: task.route }, "video task's route has no adapter now");
      await later(options.pollMaxIntervalMs);
      return;
    }
    if (!vendorLimits.tryTake(route.vendor)) {
      await later(Math.ceil(1000 / Math.max(1, options.vendorPollsPerSecond(route.vendor))));
      return;
    }
    const delay = nextPollDelayMs(now - task.createdAt, {
      minIntervalMs: options.pollMinIntervalMs,
      maxIntervalMs: options.pollMaxIntervalMs,
    });
    try {
      // A poll ends within three leases: a slow vendor may outlast one (another instance then
      // polls too, which the exactly-once finish covers), but one that trickles its answer
      // forever would otherwise hold the tick (and every other task's settlement, expiry and
      // webhook) with it. Nor does it outlast the task's expiry, which is decided right after.
      const state = await model.poll({
        upstreamModel: task.upstreamModel,
        providerTaskId: task.providerTaskId,
        abortSignal: AbortSignal.any([
          halt.signal,
          AbortSignal.timeout(Math.max(1, Math.min(3 * options.leaseMs, untilExpiry))),
        ]),
      });
      if (FINAL_VIDEO_STATUSES.has(state.status)) {
        await finishWith(task, {
          status: state.status as "succeeded" | "failed" | "canceled" | "expired",
          providerRecord: state.providerRecord,
          videoUrl: state.videoUrl ?? null,
          seed: state.seed ?? null,
          usage: state.usage ?? null,
          error: state.error ?? null,
          reportedSeconds: state.durationSeconds ?? null,
          finishedAt: clock(),
        });
        return;
      }
      if (expired()) {
        await expire(clock());
        return;
      }
      await store.recordVideoTaskProgress(task.id, owner, {
        status: state.status as "queued" | "running",
        providerRecord: state.providerRecord,
        progress: state.progress ?? null,
        nextPollAt: clock() + delay,
      });
    } catch (error) {
      if (halt.signal.aborted) {
        // Cut short by the shutdown: nothing is known of the task, so only its next poll moves
        // (this instance or another asks again later); no failure is recorded.
        await later(delay);
        return;
      }
      if (expired()) {
        await expire(clock());
        return;
      }
      const retryAfterMs = UpstreamError.isInstance(error)
        ? (error.retryAfterSeconds ?? 0) * 1000
        : 0;
      logger.warn(
        { taskId: task.id, err: error instanceof Error ? error.message : String(error) },
        "video task poll failed",
      );
      await later(Math.max(delay, retryAfterMs));
    }
  }

  async function deliverOne(task: VideoTask): Promise<void> {
    if (!task.webhookUrl) return;
    const secret = await store.webhookSecret(task.accountId, deps.webhooks.newSecret);
    const startedAt = clock();
    const result = await deps.webhooks.deliver({
      url: task.webhookUrl,
      body: JSON.stringify(renderVideoTask(task)),
      secret,
      eventId: task.id,
    });
    const attempts = task.webhookAttempts.length + 1;
    const attempt = {
      at: startedAt,
      durationMs: Math.round(result.durationMs),
      ...(result.status === undefined ? {} : { status: result.status }),
      ...(result.error === undefined ? {} : { error: result.error.slice(0, 500) }),
    };
    const firstAt = task.webhookAttempts[0]?.at ?? startedAt;
    const nextAt = startedAt + deps.webhooks.retryDelayMs(attempts);
    // No attempt starts past the give-up window: give up now if the next one would.
    const next = result.ok
      ? { state: "delivered" as const, nextAt: null }
      : deps.webhooks.givesUp(firstAt, Math.max(nextAt, clock()))
        ? { state: "failed" as const, nextAt: null }
        : { state: "pending" as const, nextAt };
    await store.recordWebhookAttempt(task.id, owner, attempt, next);
    deps.metrics?.webhookAttempt(
      result.ok ? "delivered" : next.state === "failed" ? "gave_up" : "failed",
    );
  }

  /** One tick; resolves, once its polls and settlements are done, to the attempts it started. */
  async function tick(): Promise<Array<Promise<void>>> {
    // One task that cannot be settled (its store write refused, say) is logged and tried again
    // next tick; it must not hold up the settlements, polls and webhooks of every other task.
    for (const task of await store.listFinalizingVideoTasks(options.batchSize))
      await settle(task).catch((error: unknown) => logFailure(task, error));
    if (stopped) return [];
    const due = await store.claimDueVideoTasks(clock(), owner, options.leaseMs, options.batchSize);
    await Promise.all(
      due.map((task) => pollOne(task).catch((error: unknown) => logFailure(task, error))),
    );
    const room = options.batchSize - sending.size;
    if (room <= 0 || stopped) return [];
    const lease = options.webhookLeaseMs ?? options.leaseMs;
    return startDeliveries(await store.claimDueWebhooks(clock(), owner, lease, room));
  }

  /**
   * Starts the attempts without waiting for them: a receiver that hangs until the timeout holds
   * up its own delivery only, never the polls and settlements of the next ticks.
   */
  function startDeliveries(hooks: VideoTask[]): Array<Promise<void>> {
    const started: Array<Promise<void>> = [];
    for (const task of hooks) {
      if (sending.has(task.id)) continue;
      const attempt = deliverOne(task)
        .catch((error: unknown) => logFailure(task, error))
        .finally(() => sending.delete(task.id));
      sending.set(task.id, attempt);
      started.push(attempt);
    }
    return started;
  }

  function logFailure(task: VideoTask, error: unknown): void {
    logger.warn(
      { taskId: task.id, err: error instanceof Error ? error.message : String(error) },
      "video task step failed",
    );
  }

  /** One tick at a time; resolves to the webhook attempts the tick started. */
  function runTick(): Promise<Array<Promise<void>>> {
    running ??= tick()
      .catch((error: unknown) => {
        logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "video engine tick failed",
        );
        return [];
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  /** A tick and the webhook attempts it started (tests, start-up). */
  async function runOnce(): Promise<void> {
    await Promise.all(await runTick());
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      void runTick().then(() => schedule(options.tickMs));
    }, delayMs);
    timer.unref();
  }

  // Leases left by a dead process would keep its tasks unpolled until they run out.
  const ready = store
    .clearVideoTaskLeases(options.singleProcess ? undefined : owner)
    .catch((error: unknown) =>
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        "could not end old leases",
      ),
    );
  void ready.then(() => schedule(0));
  return {
    kick: () => schedule(0),
    runOnce,
    async finish(task, status, error) {
      return finishWith(task, { status, error: error ?? null, finishedAt: clock() });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      halt.abort();
      await running;
      await Promise.all(sending.values());
    },
  };
}
