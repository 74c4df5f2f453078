/**
 * @module sandbox/video/xai-routes
 * xAI's deferred video API (protocol reference §9):
 * - `POST /xai/v1/videos/generations` → `{"request_id"}`;
 * - `GET /xai/v1/videos/{request_id}` → `{"status":"pending","progress","model"}`, then
 *   `{"status":"done","video":{"url","duration","respect_moderation":true},"model","usage":
 *   {"cost_in_usd_ticks"},"progress":100}`, or `failed` with `error{code,message}`, or
 *   `expired` once the task is past its 24 hours. A moderated output is `done` with
 *   `respect_moderation: false` and no `url`.
 * Refusals use the body xAI's API answers with: `{"code": <gRPC status description>, "error":
 * <message>}`, e.g. `{"code":"Client specified an invalid argument","error":"…"}` with 400.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
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
import { signVideoUrl } from "./video-results.ts";
import { type TaskFailure, type TaskPlan, type VideoTask, VideoTaskStore } from "./video-tasks.ts";
import { isXaiVideoModel, parseXaiRequest, type XaiJob } from "./xai-request.ts";

export const XAI_GENERATIONS_PATH = "/xai/v1/videos/generations";
export const XAI_VIDEOS_PATH = "/xai/v1/videos";
/** Result links live one hour from the end of the task (xAI documents none: "short-lived"). */
export const XAI_RESULT_TTL_MS = 60 * 60 * 1000;

/** The gRPC status descriptions xAI sends as `code`, by HTTP status. */
const STATUS_CODES: Record<number, string> = {
  400: "Client specified an invalid argument",
  401: "The request does not have valid authentication credentials",
  403: "The caller does not have permission to execute the specified operation",
  404: "Some requested entity was not found",
  408: "Deadline expired before operation could complete",
  409: "The operation was aborted",
  412: "The system is not in a state required for the operation's execution",
  429: "Some resource has been exhausted",
  500: "Internal error",
  501: "Operation is not implemented or not supported",
  503: "The service is currently unavailable",
  504: "Deadline expired before operation could complete",
};

const STATUS_MESSAGES: Record<number, string> = {
  429: "Too many requests: your team has exceeded its rate limit, please retry later.",
  500: "The service encountered an internal error, please retry.",
  503: "The service is temporarily unavailable, please retry.",
};

/** Messages of the failure codes `video-fail` may name (others get a generic one). */
const FAILURE_MESSAGES: Record<string, string> = {
  internal_error: "Video generation failed due to an internal error.",
  invalid_argument: "The request could not be processed.",
  failed_precondition: "The video could not be generated from this input.",
  service_unavailable: "The video service is temporarily unavailable.",
  permission_denied: "Your team is not allowed to use this model.",
};

export interface XaiErrorBody {
  code: string;
  error: string;
}

export function xaiError(status: number, message?: string): XaiErrorBody {
  const code = STATUS_CODES[status] ?? STATUS_CODES[status >= 500 ? 500 : 400] ?? "";
  const fallback = STATUS_MESSAGES[status] ?? `Request failed with status ${status}.`;
  return { code, error: message ?? fallback };
}

function sendXaiError(
  reply: FastifyReply,
  status: number,
  message?: string,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers(headers)
    .type("application/json")
    .send(xaiError(status, message));
}

const FAULT_ERRORS: FaultErrors = {
  badSpec: (reply, message) => sendXaiError(reply, 400, message),
  status: (reply, status, headers) => sendXaiError(reply, status, undefined, headers),
};

function refuseKey(reply: FastifyReply): FastifyReply {
  const message =
    "Incorrect API key provided. You can obtain an API key from https://console.x.ai.";
  return sendXaiError(reply, 400, message);
}

function planFor(job: XaiJob, fault: FaultSpec, lifecycleSeconds: number): TaskPlan {
  const code = fault.videoFail;
  const failure: TaskFailure | undefined =
    job.lateFailure ??
    (code ? { code, message: FAILURE_MESSAGES[code] ?? `Sandbox fault ${code}.` } : undefined);
  return {
    seconds: fault.videoSeconds ?? lifecycleSeconds,
    ...(failure ? { failure } : {}),
    ...(fault.videoModerated ? { moderated: true } : {}),
    ...(fault.videoStuck ? { stuck: true } : {}),
    ...(fault.videoThrottle ? { throttledPolls: fault.videoThrottle } : {}),
  };
}

export interface XaiRouteOptions {
  lifecycleSeconds: number;
}

async function createVideo(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  store: VideoTaskStore<XaiJob>,
  options: XaiRouteOptions,
): Promise<FastifyReply | undefined> {
  if (!hasBearerKey(request.headers)) return refuseKey(reply);
  const body = request.body;
  if (!isObject(body)) return sendXaiError(reply, 400, "The request body must be a JSON object.");
  const texts = typeof body.prompt === "string" ? [body.prompt] : [];
  const preflight = await faultPreflight(request, reply, state, texts, FAULT_ERRORS);
  if ("done" in preflight) return preflight.done;
  const model = body.model;
  if (typeof model !== "string" || model === "")
    return sendXaiError(reply, 400, "Field required: model");
  if (!isXaiVideoModel(model)) {
    const message = `The model ${model} does not exist or your team does not have access to it.`;
    return sendXaiError(reply, 404, message);
  }
  let job: XaiJob;
  try {
    job = parseXaiRequest(model, body);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    return sendXaiError(reply, 400, error.message);
  }
  const task = store.create(job, planFor(job, preflight.fault, options.lifecycleSeconds));
  return sendEmbedBody(reply, state, preflight.fault, { request_id: task.id });
}

function videoBody(
  task: VideoTask<XaiJob>,
  store: VideoTaskStore<XaiJob>,
  origin: string,
  state: SandboxState,
) {
  const view = store.view(task);
  const { job, plan } = task;
  const model = job.model;
  switch (view.phase) {
    case "EXPIRED":
      return { status: "expired", model };
    case "PENDING":
    case "RUNNING":
    case "CANCELED": // xAI has no cancel: never reached
      return { status: "pending", progress: view.progress, model };
    case "FAILED":
      return {
        status: "failed",
        error: {
          code: plan.failure?.code ?? "internal_error",
          message: plan.failure?.message ?? "",
        },
        model,
      };
    case "SUCCEEDED": {
      if (plan.moderated) {
        const video = { duration: job.duration, respect_moderation: false };
        return { status: "done", video, model, usage: { cost_in_usd_ticks: 0 }, progress: 100 };
      }
      const ttlMs = task.endMs + XAI_RESULT_TTL_MS - store.now();
      const url = signVideoUrl(
        origin,
        job.video,
        Math.max(1, Math.floor(ttlMs / 1000)),
        state.links,
      );
      const video = { url, duration: job.duration, respect_moderation: true };
      const usage = { cost_in_usd_ticks: job.costInUsdTicks };
      return { status: "done", video, model, usage, progress: 100 };
    }
  }
}

async function pollVideo(
  request: FastifyRequest<{ Params: { requestId: string } }>,
  reply: FastifyReply,
  state: SandboxState,
  store: VideoTaskStore<XaiJob>,
): Promise<FastifyReply | undefined> {
  if (!hasBearerKey(request.headers)) return refuseKey(reply);
  const preflight = await faultPreflight(request, reply, state, [], FAULT_ERRORS);
  if ("done" in preflight) return preflight.done;
  const task = store.get(request.params.requestId);
  if (!task) {
    return sendXaiError(
      reply,
      404,
      `No video request with id ${request.params.requestId} was found.`,
    );
  }
  if (store.takeThrottledPoll(task)) return sendXaiError(reply, 429);
  const body = videoBody(task, store, requestOrigin(request), state);
  return sendEmbedBody(reply, state, preflight.fault, body);
}

function bodyErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  return sendXaiError(reply, status, status < 500 ? error.message : undefined);
}

export function registerXaiVideoRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: XaiRouteOptions,
): void {
  const store = new VideoTaskStore<XaiJob>(state.links);
  app.post(XAI_GENERATIONS_PATH, { errorHandler: bodyErrorHandler }, (request, reply) =>
    createVideo(request, reply, state, store, options),
  );
  app.get<{ Params: { requestId: string } }>(`${XAI_VIDEOS_PATH}/:requestId`, (request, reply) =>
    pollVideo(request, reply, state, store),
  );
}
