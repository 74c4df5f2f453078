/**
 * @module sandbox/dashscope-multimodal
 * DashScope's native `POST /dashscope/api/v1/services/aigc/multimodal-generation/generation`,
 * shared by Qwen3-TTS and (later) Qwen-Image: bearer auth, the JSON body, the faults every
 * model honours (status, fail-times, delay, hang), then a dispatch on `model`.
 *
 * To serve another model family here, add a `MultimodalHandler` to `HANDLERS` below; a model no
 * handler serves gets DashScope's 400 `InvalidParameter` "Model not exist.".
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { closeSignal, sleep, untilClosed } from "./connection.ts";
import {
  dashScopeError,
  dashScopeErrorForStatus,
  dashScopeRequestId,
  sendDashScopeError,
} from "./dashscope-errors.ts";
import { imageHandler } from "./dashscope-image.ts";
import { type FaultSpec, parseFaultSpec, selectFaultSource } from "./faults.ts";
import { DEFAULT_FAIL_STATUS, FAULT_HEADER, FAULT_KEY_HEADER } from "./openai-chat.ts";
import { speechHandler } from "./speech-handler.ts";
import type { SandboxState } from "./state.ts";

export const MULTIMODAL_PATH = "/dashscope/api/v1/services/aigc/multimodal-generation/generation";

export interface MultimodalContext {
  state: SandboxState;
  requestId: string;
  model: string;
  body: Record<string, unknown>;
  fault: FaultSpec;
  /** Fires when the client goes away. */
  signal: AbortSignal;
}

export interface MultimodalHandler {
  /** True when this handler answers for the model (it still rejects variants it does not know). */
  serves(model: string): boolean;
  handle(
    request: FastifyRequest,
    reply: FastifyReply,
    context: MultimodalContext,
  ): Promise<FastifyReply | undefined>;
}

/** The model families this endpoint serves; the image branch goes here too. */
const HANDLERS: MultimodalHandler[] = [speechHandler, imageHandler];

function headerText(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(";") : value;
}

/** Every `text` string inside `input` (TTS text, message parts), for `[[sandbox:…]]` directives. */
export function inputTexts(value: unknown, depth = 0): string[] {
  if (depth > 6 || typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === "text" && typeof item === "string" ? [item] : inputTexts(item, depth + 1),
  );
}

export const ASYNC_CALL_MESSAGE = "current user api does not support asynchronous calls";

async function handleMultimodal(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const requestId = dashScopeRequestId();
  const authorization = request.headers.authorization;
  if (!authorization || !/^Bearer\s+\S+/i.test(authorization.trim())) {
    const { code, message } = dashScopeErrorForStatus(401);
    return sendDashScopeError(reply, 401, dashScopeError(code, message, requestId));
  }
  // Qwen-Image and Qwen3-TTS are synchronous services: the async header is refused.
  if ((headerText(request, "x-dashscope-async") ?? "").toLowerCase() === "enable") {
    return sendDashScopeError(
      reply,
      403,
      dashScopeError("AccessDenied", ASYNC_CALL_MESSAGE, requestId),
    );
  }
  const body = request.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("InvalidParameter", "The request body must be a JSON object.", requestId),
    );
  }
  const fields = body as Record<string, unknown>;
  const model = fields.model;
  if (typeof model !== "string" || model === "") {
    const message = "Model not specified or model is empty.";
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("BadRequest.EmptyModel", message, requestId),
    );
  }
  const source = selectFaultSource(headerText(request, FAULT_HEADER), inputTexts(fields.input));
  const parsed = parseFaultSpec(source?.spec ?? "");
  if (!parsed.ok) {
    const message = `Invalid sandbox fault spec '${source?.spec}': ${parsed.message}.`;
    return sendDashScopeError(reply, 400, dashScopeError("InvalidParameter", message, requestId));
  }
  const fault = parsed.fault;
  const signal = closeSignal(reply.raw);
  if (fault.hang) {
    reply.hijack();
    await untilClosed(signal);
    return undefined;
  }
  if (!(await sleep(fault.delayMs ?? 0, signal))) {
    reply.hijack();
    return undefined;
  }
  const key = headerText(request, FAULT_KEY_HEADER) || (source?.spec ?? "");
  const status =
    fault.failTimes === undefined
      ? fault.status
      : state.shouldFail(key, fault.failTimes)
        ? (fault.status ?? DEFAULT_FAIL_STATUS)
        : undefined;
  if (status !== undefined) {
    const { code, message } = dashScopeErrorForStatus(status);
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers["retry-after"] = fault.retryAfter;
    return sendDashScopeError(reply, status, dashScopeError(code, message, requestId), headers);
  }

  const handler = HANDLERS.find((candidate) => candidate.serves(model));
  if (!handler) {
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("InvalidParameter", "Model not exist.", requestId),
    );
  }
  return handler.handle(request, reply, { state, requestId, model, body: fields, fault, signal });
}

export function registerMultimodalGeneration(app: FastifyInstance, state: SandboxState): void {
  app.route({
    method: "POST",
    url: MULTIMODAL_PATH,
    handler: (request, reply) => handleMultimodal(request, reply, state),
    // Body errors (bad JSON, too large) in DashScope's envelope rather than OpenAI's.
    errorHandler: (error: FastifyError, _request, reply) => {
      const status =
        error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
      const fallback = dashScopeErrorForStatus(status);
      const message = status < 500 ? error.message : fallback.message;
      return sendDashScopeError(reply, status, dashScopeError(fallback.code, message));
    },
  });
}
