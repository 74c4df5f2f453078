/**
 * @module endpoints/videos/routes
 * The video task API: submit (`POST /v1/videos/generations`, the model pipeline with a hold the
 * task owns), read one task by the platform's or the vendor's id, list the account's tasks
 * newest first, cancel where the vendor can, and the account's webhook signing secret. Only the
 * owning account sees a task; anyone else gets 404, as if it did not exist.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import { assertAccountWide } from "../../auth/index.ts";
import type { ModelEndpoint } from "../../core/operation.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { auditOrigin } from "../../http/audit-origin.ts";
import { registerModelEndpoint } from "../../http/model-endpoint.ts";
import { SANDBOX_HEADER } from "../../http/response-headers.ts";
import { registerRoute } from "../../http/route.ts";
import { UpstreamError } from "../../spec/index.ts";
import { decodeCursor, pageOf } from "../../store/cursor.ts";
import type { VideoTask } from "../../store/index.ts";
import { renderVideoTask } from "../../tasks/index.ts";
import { priceVideo, submitVideoTask } from "./operation.ts";
import { planVideo, videoDialect } from "./plan-video.ts";
import { VideoGenerationRequest, VideoTaskRecord } from "./schema.ts";

export const videoGenerationsEndpoint: ModelEndpoint<typeof VideoGenerationRequest> = {
  method: "POST",
  path: "/v1/videos/generations",
  summary:
    "Submit a video task (spec 2.5, 2.6): 202 with the task; poll it, or give `webhook_url`. Billed per second of video at the requested resolution, held at submission, charged when the task succeeds and released when it fails. `Idempotency-Key` makes a retried submission return the first task.",
  tags: ["videos"],
  kinds: ["video"],
  body: VideoGenerationRequest,
  response: VideoTaskRecord,
  successStatus: 202,
  dialect: videoDialect,
  holdsItself: true,
  validateForModel: (body, model) => {
    planVideo(body, model);
  },
  estimateCost: async (body, model) => {
    const plan = planVideo(body, model);
    return priceVideo(model, plan.durationSeconds, plan.resolution);
  },
  run: submitVideoTask,
};

async function ownTask(services: Services, accountId: string, id: string) {
  const task = await services.store.findVideoTask(accountId, id);
  if (!task) throw new GatewayError("task_not_found", { id: id.slice(0, 200) });
  return task;
}

/** A task the sandbox runs is marked as such, like every answer the sandbox served. */
function markSandbox(services: Services, task: VideoTask, reply: FastifyReply): void {
  if (services.videoTasks.routeOf(task)?.sandbox) reply.header(SANDBOX_HEADER, "true");
}

/**
 * The vendor's refusal to cancel a task (DashScope answers 400 `UnsupportedOperation` once the
 * task is no longer PENDING) as the contract's `409 task_not_cancelable`; undefined for any other
 * failure (a network error, the vendor's own 5xx, a bad vendor key), which passes on as it is.
 */
function vendorRefusal(task: VideoTask, error: unknown): GatewayError | undefined {
  if (!UpstreamError.isInstance(error) || error.kind !== "http") return undefined;
  const refused =
    error.vendorCode === "UnsupportedOperation" ||
    error.status === 400 ||
    error.status === 404 ||
    error.status === 409;
  if (!refused) return undefined;
  return new GatewayError(
    "task_not_cancelable",
    {
      id: task.id,
      detail: "the vendor refused to cancel it; it has most likely started.",
    },
    { cause: error },
  );
}

export function registerVideoRoutes(app: FastifyInstance, services: Services): void {
  registerModelEndpoint(app, services, videoGenerationsEndpoint);

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/videos/generations/:id",
    summary: "A video task of your account, by its id (`vtask_…`) or the vendor's task id.",
    tags: ["videos"],
    auth: "account",
    response: VideoTaskRecord,
    async handler({ caller, params, reply }) {
      const task = await ownTask(services, caller.accountId, params.id ?? "");
      markSandbox(services, task, reply);
      return renderVideoTask(task);
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/videos/generations",
    summary:
      "Your account's video tasks, newest first, in cursor pages (`cursor`, `next_cursor`); `after` (a task id) also pages on.",
    tags: ["videos"],
    auth: "account",
    query: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
        after: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        cursor: Type.Optional(Type.String({ description: "`next_cursor` of the previous page." })),
      },
      { additionalProperties: false },
    ),
    async handler({ caller, query }) {
      const limit = query.limit ?? 20;
      if (query.cursor !== undefined && query.after !== undefined) {
        throw new GatewayError(
          "invalid_request",
          { detail: "Pass `cursor` or `after`, not both." },
          { param: "after" },
        );
      }
      const key =
        query.cursor === undefined ? undefined : decodeCursor(query.cursor, ["number", "string"]);
      const tasks = await services.store.listVideoTasks(caller.accountId, {
        limit: limit + 1,
        ...(query.after === undefined ? {} : { after: query.after }),
        ...(key ? { afterKey: { createdAt: Number(key[0]), id: String(key[1]) } } : {}),
      });
      const page = pageOf(tasks, limit, (task) => [task.createdAt, task.id], renderVideoTask);
      return { ...page, last_id: page.data.at(-1)?.id ?? null };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/videos/generations/:id/cancel",
    summary:
      "Cancels a video task the vendor has not started (where the vendor can); its hold is released.",
    tags: ["videos"],
    auth: "key",
    response: VideoTaskRecord,
    async handler({ caller, params, reply }) {
      const task = await ownTask(services, caller.accountId, params.id ?? "");
      markSandbox(services, task, reply);
      if (task.finishedAt !== null || task.providerTaskId === null)
        throw new GatewayError("task_not_cancelable", {
          id: task.id,
          detail:
            task.finishedAt !== null ? `it is already ${task.status}.` : "it is being submitted.",
        });
      const route = services.videoTasks.routeOf(task);
      const vendor = route && services.providers.videoModel(route);
      if (!vendor?.cancel)
        throw new GatewayError("task_not_cancelable", {
          id: task.id,
          detail: "its vendor has no way to cancel a task.",
        });
      // The vendors that cancel (DashScope) cancel only a task they have not started: one the
      // gateway already saw running is refused here, without asking the vendor.
      if (task.status === "running")
        throw new GatewayError("task_not_cancelable", {
          id: task.id,
          detail: "the vendor has started it; only a queued task can be canceled.",
        });
      try {
        await vendor.cancel({
          upstreamModel: task.upstreamModel,
          providerTaskId: task.providerTaskId,
        });
      } catch (error) {
        throw vendorRefusal(task, error) ?? error;
      }
      const won = await services.videoTasks.finish(task, "canceled");
      const current = (await services.store.findVideoTaskById(task.id)) ?? task;
      // Lost the race to another ending (the poller saw it succeed, fail or expire): the task
      // was not canceled, so this is no 200.
      if (!won && current.status !== "canceled")
        throw new GatewayError("task_not_cancelable", {
          id: task.id,
          detail: `it is already ${current.status}.`,
        });
      return renderVideoTask(current);
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/webhook-secret",
    summary: "The secret that signs your webhooks (`Switchyard-Signature`), created on first use.",
    tags: ["videos"],
    auth: "account",
    async handler({ caller }) {
      const secret = await services.store.webhookSecret(caller.accountId, () =>
        services.videoTasks.newWebhookSecret(),
      );
      return { object: "webhook_secret", secret };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/webhook-secret/rotate",
    summary:
      "Replaces the webhook signing secret; deliveries from now on are signed with the new one.",
    tags: ["videos"],
    auth: "account",
    async handler({ caller, request }) {
      assertAccountWide(caller, "rotate the account's webhook secret");
      const secret = await services.store.rotateWebhookSecret(
        caller.accountId,
        services.videoTasks.newWebhookSecret(),
        auditOrigin(request, caller),
      );
      return { object: "webhook_secret", secret };
    },
  });
}
