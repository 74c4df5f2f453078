/**
 * @module endpoints/videos/operation
 * Submission of a video task, transport-free: plan the request (what is billed, what the vendor
 * gets), check the webhook URL, then create the task with its durable hold in one step — or find
 * the task an earlier submission with the same `Idempotency-Key` created — and hand the body to
 * the vendor. A vendor that refuses the submission gets the task failed and its hold released,
 * and its status and text reach the client. The answer is 202 with the task record.
 */
import { createHash } from "node:crypto";
import {
  priceUsage,
  spendLimitChecks,
  spendLimitReached,
  spendLimitsOf,
} from "../../billing/index.ts";
import type { CatalogModel } from "../../catalog/index.ts";
import { IDEMPOTENT_REPLAYED_HEADER, readIdempotencyKey } from "../../core/idempotency-key.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { detachedSignal } from "../../core/request-context.ts";
import { GatewayError } from "../../errors/index.ts";
import { admitFirst, logAttempts, orderRoutes, verdictOf } from "../../routing/index.ts";
import { UpstreamError, type VideoModel } from "../../spec/index.ts";
import { newId } from "../../store/index.ts";
import { renderVideoTask, routeKey } from "../../tasks/index.ts";
import { planVideo } from "./plan-video.ts";
import type { VideoGenerationRequest } from "./schema.ts";

/** Request bodies kept on the task whole up to this size; larger ones (inline media) are summarized. */
const MAX_KEPT_BODY_CHARS = 16 * 1024;

/**
 * What the task keeps of the request: the body as sent, or, for a large one (images inlined as
 * data URIs), its billed fields and seed, so no client can fill the database with task bodies.
 */
function keptBody(body: VideoGenerationRequest): unknown {
  const text = JSON.stringify(body);
  if (text.length <= MAX_KEPT_BODY_CHARS) return body;
  const seed = (body.parameters as { seed?: unknown } | undefined)?.seed;
  return {
    model: body.model,
    duration: body.duration,
    resolution: body.resolution,
    aspect_ratio: body.aspect_ratio,
    ...(seed === undefined ? {} : { parameters: { seed } }),
    omitted: `the request body (${text.length} characters) is not kept whole`,
  };
}

/** The price of `seconds` of video at `resolution` (the hold of a task). */
export function priceVideo(model: CatalogModel, seconds: number, resolution: string) {
  return priceUsage(model.pricing, {
    media: { videoSeconds: { seconds, resolution }, source: "estimated" },
  });
}

/** JSON with keys sorted at every level: equal bodies hash equally, whatever the key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function vendorError(error: unknown): { code: string; message: string } {
  if (UpstreamError.isInstance(error))
    return { code: error.vendorCode ?? `http_${error.status ?? "error"}`, message: error.message };
  return {
    code: "SubmissionFailed",
    message: error instanceof Error ? error.message : String(error),
  };
}

export async function submitVideoTask(
  body: VideoGenerationRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const { services, model } = context;
  const plan = planVideo(body, model);
  const key = readIdempotencyKey(context.headers);
  if (body.webhook_url !== undefined) await services.videoTasks.checkWebhookUrl(body.webhook_url);
  const health = services.routeHealth;
  const logAttempt = logAttempts(context);
  const candidates = orderRoutes(model).filter((route) => services.providers.videoModel(route));
  const route = admitFirst(model, candidates, health, logAttempt);
  const vendor = route && services.providers.videoModel(route);
  if (!route || !vendor) throw new GatewayError("provider_not_configured", { model: model.id });
  let called = false;
  try {
    const hold = priceVideo(model, plan.durationSeconds, plan.resolution).costMicros;
    const requestHash = createHash("sha256").update(canonical(body)).digest("hex");
    const now = services.now();
    const spendLimits = spendLimitsOf(context.key);
    const created = await services.store.createVideoTask({
      id: newId("vtask"),
      accountId: context.accountId,
      keyId: context.key.id,
      model: model.id,
      route: routeKey(route),
      upstreamModel: route.upstreamModel,
      requestBody: keptBody(body),
      idempotencyKey: key,
      requestHash,
      durationSeconds: plan.durationSeconds,
      resolution: plan.resolution,
      aspectRatio: plan.aspectRatio,
      holdMicros: hold,
      webhookUrl: body.webhook_url ?? null,
      nextPollAt: now + services.videoTasks.submitGraceMs,
      spendLimits: spendLimitChecks(spendLimits, now),
    });
    if (created.kind === "spend_limit")
      throw spendLimitReached(created.spendLimit, spendLimits, hold, now);
    if (created.kind === "insufficient_balance")
      throw new GatewayError("insufficient_balance", {
        required: hold,
        available: Math.max(0, created.availableMicros),
      });
    if (created.kind === "existing") {
      context.routeCalled(route);
      if (created.task.requestHash !== requestHash)
        throw new GatewayError("idempotency_conflict", { key: key ?? "" });
      return {
        kind: "accepted",
        status: 202,
        body: renderVideoTask(created.task),
        headers: { [IDEMPOTENT_REPLAYED_HEADER]: "true" },
      };
    }

    const task = created.task;
    // The engine follows the task at this route even if a reload changes or removes it.
    services.videoTasks.remember(model.id, route);
    let submission: Awaited<ReturnType<typeof vendor.submit>>;
    context.routeCalled(route);
    logAttempt.starting?.(route, 0);
    const started = performance.now();
    called = true;
    // While the vendor takes its time, the task is not taken for one whose submission was
    // interrupted (a crash): that is decided `submit_grace_seconds` after the last sign of life.
    const grace = services.videoTasks.submitGraceMs;
    const alive = setInterval(
      () => {
        services.store.extendVideoTaskSubmission(task.id, services.now() + grace).catch(() => {});
      },
      Math.max(1, Math.floor(grace / 3)),
    );
    alive.unref();
    try {
      // Not tied to the client's connection: once the vendor may have the task, it is followed
      // (the call still carries the request's ids and trace context).
      submission = await vendor.submit({
        upstreamModel: route.upstreamModel,
        body: plan.vendorBody,
        abortSignal: detachedSignal(context.signal),
      });
      health?.report(route, "success");
      logAttempt({ route, ok: true, durationMs: performance.now() - started });
    } catch (error) {
      const upstream = UpstreamError.isInstance(error) ? error : undefined;
      health?.report(
        route,
        verdictOf(upstream),
        upstream && { kind: upstream.kind, status: upstream.status, message: upstream.message },
      );
      logAttempt({ route, ok: false, error: upstream, durationMs: performance.now() - started });
      await services.store.releaseIdempotencyKey(task.id);
      await services.videoTasks.finish(task, "failed", vendorError(error));
      throw error;
    } finally {
      clearInterval(alive);
    }
    const mark = await services.store.markVideoTaskSubmitted(task.id, {
      providerTaskId: submission.providerTaskId,
      providerRecord: submission.providerRecord,
      nextPollAt: services.now() + services.videoTasks.firstPollMs,
    });
    if (mark === "finished")
      cancelAbandoned(services, vendor, route.upstreamModel, task.id, submission);
    if (mark === "duplicate") {
      // The vendor named a task another submission already follows: following both would
      // charge one video twice. This one fails, its hold released; the other goes on.
      const detail = `the vendor answered with the task id '${submission.providerTaskId}' of another task`;
      services.logger.error(
        { taskId: task.id, providerTaskId: submission.providerTaskId, route: routeKey(route) },
        "the vendor acknowledged a video task with the id of a task already followed; this one fails, its hold released",
      );
      await services.store.releaseIdempotencyKey(task.id);
      await services.videoTasks.finish(task, "failed", {
        code: "DuplicateTaskId",
        message: detail,
      });
      throw new GatewayError("upstream_error", { detail });
    }
    services.videoTasks.kick();
    const submitted = (await services.store.findVideoTaskById(task.id)) ?? task;
    return {
      kind: "accepted",
      status: 202,
      body: renderVideoTask(submitted),
      warnings: plan.warnings,
    };
  } finally {
    // A submission that never reached the vendor leaves the route's health as it was.
    if (!called) health?.report(route, "neutral");
  }
}

/**
 * The vendor acknowledged a task the gateway had already given up as interrupted (its hold
 * released): a video nobody follows, delivers or bills is being made at the operator's cost.
 * It is logged, and a vendor that can cancel is asked to (in the background; a refusal, say of
 * a task it has already started, is logged too).
 */
function cancelAbandoned(
  services: OperationContext["services"],
  vendor: VideoModel,
  upstreamModel: string,
  taskId: string,
  submission: { providerTaskId: string },
): void {
  const facts = { taskId, providerTaskId: submission.providerTaskId };
  services.logger.error(
    facts,
    vendor.cancel
      ? "the vendor acknowledged a video task already given up as interrupted; it is not followed, and the vendor is asked to cancel it"
      : "the vendor acknowledged a video task already given up as interrupted; it is not followed (the vendor cannot cancel it)",
  );
  vendor.cancel?.({ upstreamModel, providerTaskId: submission.providerTaskId }).then(
    () => services.logger.warn(facts, "the vendor canceled the abandoned video task"),
    (error: unknown) =>
      services.logger.error(
        { ...facts, err: error instanceof Error ? error.message : String(error) },
        "the vendor did not cancel the abandoned video task",
      ),
  );
}
