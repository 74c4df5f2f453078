/**
 * @module sandbox/anthropic-messages
 * The Anthropic Messages API emulation under `/anthropic`: `POST /v1/messages` and
 * `POST /v1/messages/count_tokens` (query strings such as `?beta=true` are ignored), with
 * Anthropic's error envelope for every failure in this prefix, including bad JSON and unknown
 * paths.
 *
 * Order of checks: auth (`x-api-key` or `Authorization: Bearer`, else 401
 * `authentication_error`), the `anthropic-version` header (any value, else 400), the body, the
 * fault spec. Faults work as on the OpenAI routes with Anthropic bodies (`status=N` → the
 * envelope with N's error type, `retry-after` when asked); stream specifics are in
 * `anthropic-stream.ts`. `no-usage` leaves the `usage` objects out entirely: the non-stream
 * body's, and both `message_start.message.usage` and `message_delta.usage` in a stream.
 * count_tokens answers `{"input_tokens": N}` (the prompt count messages report as input plus
 * cache) and ignores faults.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  anthropicError,
  anthropicErrorForStatus,
  anthropicErrorType,
  newRequestId,
  randomBase62,
  sendAnthropicError,
} from "./anthropic-errors.ts";
import { normalizeAnthropicRequest } from "./anthropic-normalize.ts";
import { planAnthropicReply } from "./anthropic-reply.ts";
import { type AnthropicRequest, parseAnthropicRequest } from "./anthropic-request.ts";
import { messageBody, streamEvents } from "./anthropic-shapes.ts";
import { writeAnthropicStream } from "./anthropic-stream.ts";
import { countPromptTokens } from "./chat-reply.ts";
import { closeSignal, sleep, untilClosed } from "./connection.ts";
import { promptOverWindow } from "./context-window.ts";
import { type FaultSource, type FaultSpec, parseFaultSpec, selectFaultSource } from "./faults.ts";
import { DEFAULT_FAIL_STATUS, FAULT_HEADER, FAULT_KEY_HEADER } from "./openai-chat.ts";
import type { SandboxState } from "./state.ts";

export const ANTHROPIC_PREFIX = "/anthropic";

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(";") : value;
}

function hasCredentials(headers: IncomingHttpHeaders): boolean {
  const apiKey = headerText(headers, "x-api-key")?.trim();
  const authorization = headerText(headers, "authorization")?.trim();
  return Boolean(apiKey) || (authorization !== undefined && /^Bearer\s+\S+/i.test(authorization));
}

/** Checks shared by both routes; sends the error and returns undefined when one fails. */
function admit(
  request: FastifyRequest,
  reply: FastifyReply,
  requestId: string,
  kind: "messages" | "count_tokens",
): AnthropicRequest | undefined {
  const fail = (status: number, message: string) => {
    sendAnthropicError(
      reply,
      status,
      anthropicError(anthropicErrorType(status), message, requestId),
    );
    return undefined;
  };
  if (!hasCredentials(request.headers)) return fail(401, "x-api-key header is required");
  if (!headerText(request.headers, "anthropic-version")?.trim()) {
    return fail(400, "anthropic-version: header is required");
  }
  const parsed = parseAnthropicRequest(request.body, kind);
  return parsed.ok ? parsed.request : fail(400, parsed.message);
}

/** The status to inject for this request, honouring `fail-times` counters. */
function injectedStatus(
  fault: FaultSpec,
  source: FaultSource | undefined,
  headers: IncomingHttpHeaders,
  state: SandboxState,
): number | undefined {
  if (fault.failTimes === undefined) return fault.status;
  const key = headerText(headers, FAULT_KEY_HEADER) || (source?.spec ?? "");
  return state.shouldFail(key, fault.failTimes) ? (fault.status ?? DEFAULT_FAIL_STATUS) : undefined;
}

async function handleMessages(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const requestId = newRequestId();
  const headers = { "request-id": requestId };
  const parsed = admit(request, reply, requestId, "messages");
  if (!parsed) return reply;
  const normalized = normalizeAnthropicRequest(parsed);
  const texts = normalized.chat.messages.map((message) => message.text);
  if (normalized.prefill) texts.push(normalized.prefill);
  const tooLong = promptOverWindow(
    parsed.model,
    texts,
    countPromptTokens(normalized.chat.messages),
  );
  if (tooLong) {
    const message = `prompt is too long: ${tooLong.tokens} tokens > ${tooLong.window} maximum`;
    return sendAnthropicError(
      reply,
      400,
      anthropicError("invalid_request_error", message, requestId),
      headers,
    );
  }
  const source = selectFaultSource(headerText(request.headers, FAULT_HEADER), texts);
  const faultResult = parseFaultSpec(source?.spec ?? "");
  if (!faultResult.ok) {
    const message = `Invalid sandbox fault spec '${source?.spec}': ${faultResult.message}.`;
    return sendAnthropicError(
      reply,
      400,
      anthropicError("invalid_request_error", message, requestId),
    );
  }
  const fault = faultResult.fault;
  const signal = closeSignal(reply.raw);
  if (fault.hang) {
    reply.hijack();
    await untilClosed(signal);
    return undefined;
  }
  if (!(await sleep(fault.delayMs ?? 0, signal))) {
    reply.hijack(); // the client left during the delay; there is nobody to answer
    return undefined;
  }
  const status = injectedStatus(fault, source, request.headers, state);
  const midStreamError =
    status !== undefined && parsed.stream && fault.malformedAfter !== undefined;
  if (status !== undefined && !midStreamError) {
    const extra: Record<string, string> = {};
    if (fault.retryAfter !== undefined) extra["retry-after"] = fault.retryAfter;
    return sendAnthropicError(reply, status, anthropicErrorForStatus(status, requestId), extra);
  }

  const plan = planAnthropicReply(parsed, normalized, {
    ...(fault.words === undefined ? {} : { words: fault.words }),
    ...(fault.offSchema ? { offSchema: true } : {}),
    ...(fault.cachedTokens === undefined ? {} : { cachedTokens: fault.cachedTokens }),
    ...(fault.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: fault.cacheWriteTokens }),
  });
  const meta = { id: `msg_01${randomBase62(22)}`, model: parsed.model };
  if (!parsed.stream) {
    if (fault.dropAfter !== undefined) {
      reply.hijack();
      state.markDropped(reply.raw);
      reply.raw.socket?.destroy();
      return undefined;
    }
    const body = messageBody(meta, plan, !fault.noUsage);
    if (fault.malformedAfter !== undefined) {
      // Half of the JSON: a body that never parses.
      const json = JSON.stringify(body);
      return reply
        .code(200)
        .headers(headers)
        .type("application/json")
        .send(json.slice(0, Math.floor(json.length / 2)));
    }
    return reply.code(200).headers(headers).send(body);
  }
  reply.hijack();
  await writeAnthropicStream(
    reply.raw,
    headers,
    streamEvents(meta, plan, !fault.noUsage),
    {
      chunkDelayMs: fault.chunkDelayMs ?? 0,
      dropAfter: fault.dropAfter,
      malformedAfter: fault.malformedAfter,
      errorEvent: midStreamError ? anthropicErrorForStatus(status, requestId) : undefined,
    },
    { signal, onDrop: () => state.markDropped(reply.raw) },
  );
  return undefined;
}

function handleCountTokens(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const requestId = newRequestId();
  const parsed = admit(request, reply, requestId, "count_tokens");
  if (!parsed) return reply;
  const { chat } = normalizeAnthropicRequest(parsed);
  return reply
    .code(200)
    .headers({ "request-id": requestId })
    .send({ input_tokens: countPromptTokens(chat.messages) });
}

export function registerAnthropicRoutes(app: FastifyInstance, state: SandboxState): void {
  app.register(
    async (scope) => {
      scope.setErrorHandler((error: FastifyError, request, reply) => {
        const status =
          error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
        if (status >= 500) request.log.error(error);
        const body =
          status >= 500
            ? anthropicErrorForStatus(status, newRequestId())
            : anthropicError(anthropicErrorType(status), error.message, newRequestId());
        return sendAnthropicError(reply, status, body);
      });
      scope.post("/v1/messages", (request, reply) => handleMessages(request, reply, state));
      scope.post("/v1/messages/count_tokens", handleCountTokens);
      scope.all("/*", (request, reply) => {
        const path = request.url.split("?")[0];
        const message = `Unknown sandbox path (${request.method} ${path})`;
        return sendAnthropicError(
          reply,
          404,
          anthropicError("not_found_error", message, newRequestId()),
        );
      });
    },
    { prefix: ANTHROPIC_PREFIX },
  );
}
