/**
 * @module sandbox/video/wan-routes
 * DashScope's asynchronous Wan video API (protocol reference §1, §3):
 * - `POST /dashscope/api/v1/services/aigc/video-generation/video-synthesis`: bearer auth, then
 *   `X-DashScope-Async: enable` or 403 `AccessDenied`, then the request faults, then the model's
 *   validation; answers `{"output":{"task_id","task_status":"PENDING"},"request_id"}`.
 * - `GET /dashscope/api/v1/tasks/{task_id}`: the task's state (`wan-responses.ts`), at most
 *   {@link POLLS_PER_SECOND} polls a second per API key (429 `Throttling.RateQuota` beyond).
 * - `POST /dashscope/api/v1/tasks/{task_id}/cancel`: only while PENDING.
 * Errors use DashScope's `{request_id, code, message}` envelope.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  dashScopeError,
  dashScopeErrorForStatus,
  dashScopeRequestId,
  sendDashScopeError,
} from "../dashscope-errors.ts";
import { statusForCode } from "../dashscope-image.ts";
import { stableHash } from "../deterministic-text.ts";
import type { FaultSpec } from "../faults.ts";
import {
  type FaultErrors,
  faultPreflight,
  hasBearerKey,
  sendEmbedBody,
} from "../request-faults.ts";
import { requestOrigin } from "../signed-links.ts";
import type { SandboxState } from "../state.ts";
import { FieldError, isObject } from "./video-fields.ts";
import { frameSize } from "./video-frames.ts";
import { POLLS_PER_SECOND, PollLimiter, type TaskPlan, VideoTaskStore } from "./video-tasks.ts";
import { wanModel } from "./wan-models.ts";
import { parseWanRequest, type WanJob } from "./wan-request.ts";
import {
  MODERATION_FAILURE,
  unknownTaskBody,
  type WanTaskJob,
  wanFailure,
  wanTaskBody,
} from "./wan-responses.ts";

export const VIDEO_SYNTHESIS_PATH =
  "/dashscope/api/v1/services/aigc/video-generation/video-synthesis";
export const TASKS_PATH = "/dashscope/api/v1/tasks";

export const SYNC_CALL_MESSAGE = "current user api does not support synchronous calls";
export const CANCEL_REFUSED_MESSAGE =
  "Failed to cancel the task, please confirm if the task is in PENDING status.";

export interface WanRouteOptions {
  /** Seconds a task takes when no `video-seconds` fault says otherwise. */
  lifecycleSeconds: number;
}

function faultErrors(requestId: string): FaultErrors {
  return {
    badSpec: (reply, message) =>
      sendDashScopeError(reply, 400, dashScopeError("InvalidParameter", message, requestId)),
    status: (reply, status, headers) => {
      const { code, message } = dashScopeErrorForStatus(status);
      return sendDashScopeError(reply, status, dashScopeError(code, message, requestId), headers);
    },
  };
}

function refuseKey(reply: FastifyReply, requestId: string): FastifyReply {
  const { code, message } = dashScopeErrorForStatus(401);
  return sendDashScopeError(reply, 401, dashScopeError(code, message, requestId));
}

function isAsync(request: FastifyRequest): boolean {
  const value = request.headers["x-dashscope-async"];
  return typeof value === "string" && value.trim().toLowerCase() === "enable";
}

/** What the task will do: the job's late failure first, then the faults' outcome. */
function planFor(job: WanJob, fault: FaultSpec, lifecycleSeconds: number): TaskPlan {
  const failure =
    job.lateFailure ??
    (fault.videoModerated
      ? MODERATION_FAILURE
      : fault.videoFail
        ? wanFailure(fault.videoFail)
        : undefined);
  return {
    seconds: fault.videoSeconds ?? lifecycleSeconds,
    ...(failure ? { failure } : {}),
    ...(fault.videoStuck ? { stuck: true } : {}),
    ...(fault.videoThrottle ? { throttledPolls: fault.videoThrottle } : {}),
  };
}

/** What the task keeps: the job without its links, and the video it gives, seeded by the request. */
function taskJob(job: WanJob): WanTaskJob {
  const [width, height] = job.size.split("*").map(Number);
  const seed = stableHash(
    [
      job.model.name,
      job.prompt ?? "",
      job.negativePrompt ?? "",
      String(job.seed ?? ""),
      job.size,
      String(job.duration),
      ...job.media,
    ].join("\n"),
  );
  const frame = frameSize(job.tier, width ?? 16, height ?? 9);
  const { media: _media, lateFailure: _failure, ...kept } = job;
  return { ...kept, video: { ...frame, seconds: job.duration, seed } };
}

async function createTask(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  store: VideoTaskStore<WanTaskJob>,
  options: WanRouteOptions,
): Promise<FastifyReply | undefined> {
  const requestId = dashScopeRequestId();
  if (!hasBearerKey(request.headers)) return refuseKey(reply, requestId);
  if (!isAsync(request)) {
    return sendDashScopeError(
      reply,
      403,
      dashScopeError("AccessDenied", SYNC_CALL_MESSAGE, requestId),
    );
  }
  const body = request.body;
  if (!isObject(body)) {
    const message = "The request body must be a JSON object.";
    return sendDashScopeError(reply, 400, dashScopeError("InvalidParameter", message, requestId));
  }
  if (typeof body.model !== "string" || body.model === "") {
    const message = "Model not specified or model is empty.";
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("BadRequest.EmptyModel", message, requestId),
    );
  }
  const prompt = isObject(body.input) ? body.input.prompt : undefined;
  const texts = typeof prompt === "string" ? [prompt] : [];
  const preflight = await faultPreflight(request, reply, state, texts, faultErrors(requestId));
  if ("done" in preflight) return preflight.done;
  const { fault } = preflight;
  if (fault.code) {
    const { message } = wanFailure(fault.code);
    const headers: Record<string, string> =
      fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter };
    const error = dashScopeError(fault.code, message, requestId);
    return sendDashScopeError(reply, statusForCode(fault.code), error, headers);
  }
  const model = wanModel(body.model);
  if (!model) {
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("InvalidParameter", "Model not exist.", requestId),
    );
  }
  let job: WanJob;
  try {
    job = parseWanRequest(model, body);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    return sendDashScopeError(reply, 400, dashScopeError(error.code, error.message, requestId));
  }
  const task = store.create(taskJob(job), planFor(job, fault, options.lifecycleSeconds));
  const answer = { output: { task_id: task.id, task_status: "PENDING" }, request_id: requestId };
  return sendEmbedBody(reply, state, fault, answer);
}

async function pollTask(
  request: FastifyRequest<{ Params: { taskId: string } }>,
  reply: FastifyReply,
  state: SandboxState,
  store: VideoTaskStore<WanTaskJob>,
  limiter: PollLimiter,
): Promise<FastifyReply | undefined> {
  const requestId = dashScopeRequestId();
  if (!hasBearerKey(request.headers)) return refuseKey(reply, requestId);
  const preflight = await faultPreflight(request, reply, state, [], faultErrors(requestId));
  if ("done" in preflight) return preflight.done;
  const { taskId } = request.params;
  const task = store.get(taskId);
  const throttled =
    !limiter.allow(String(request.headers.authorization).trim()) ||
    (task !== undefined && store.takeThrottledPoll(task));
  if (throttled) {
    const { code, message } = dashScopeErrorForStatus(429);
    return sendDashScopeError(reply, 429, dashScopeError(code, message, requestId));
  }
  if (!task) return reply.code(200).send(unknownTaskBody(taskId, requestId));
  const nowMs = store.now();
  const host = { origin: requestOrigin(request), links: state.links, nowMs };
  return sendEmbedBody(
    reply,
    state,
    preflight.fault,
    wanTaskBody(task, store.view(task), requestId, host),
  );
}

function cancelTask(
  request: FastifyRequest<{ Params: { taskId: string } }>,
  reply: FastifyReply,
  store: VideoTaskStore<WanTaskJob>,
): FastifyReply {
  const requestId = dashScopeRequestId();
  if (!hasBearerKey(request.headers)) return refuseKey(reply, requestId);
  const task = store.get(request.params.taskId);
  if (!task || !store.cancel(task)) {
    const error = dashScopeError("UnsupportedOperation", CANCEL_REFUSED_MESSAGE, requestId);
    return sendDashScopeError(reply, 400, error);
  }
  return reply.code(200).send({ request_id: requestId });
}

/** Body errors (bad JSON, too large, wrong type) in DashScope's envelope. */
function bodyErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  const fallback = dashScopeErrorForStatus(status);
  const message = status < 500 ? error.message : fallback.message;
  return sendDashScopeError(reply, status, dashScopeError(fallback.code, message));
}

export function registerWanRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: WanRouteOptions,
): void {
  const store = new VideoTaskStore<WanTaskJob>(state.links);
  const limiter = new PollLimiter(POLLS_PER_SECOND);
  app.post(VIDEO_SYNTHESIS_PATH, { errorHandler: bodyErrorHandler }, (request, reply) =>
    createTask(request, reply, state, store, options),
  );
  app.get<{ Params: { taskId: string } }>(`${TASKS_PATH}/:taskId`, (request, reply) =>
    pollTask(request, reply, state, store, limiter),
  );
  app.post<{ Params: { taskId: string } }>(
    `${TASKS_PATH}/:taskId/cancel`,
    {
      // A cancel carries no body; one sent empty with a JSON content type is no error.
      errorHandler: (error, request, reply) =>
        error.code === "FST_ERR_CTP_EMPTY_JSON_BODY"
          ? cancelTask(request, reply, store)
          : bodyErrorHandler(error, request, reply),
    },
    (request, reply) => cancelTask(request, reply, store),
  );
}
