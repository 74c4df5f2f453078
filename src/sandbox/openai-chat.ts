/**
 * @module sandbox/openai-chat
 * The OpenAI-compatible `POST …/chat/completions` route, served under every vendor prefix:
 * bearer auth, request validation (the shape, then what the prefix's vendor refuses for the
 * model: `openai-model-rules.ts`), fault selection and injection, then a deterministic
 * non-stream body or a stream, with one choice per `n`.
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { countPromptTokens, planChatReply, requestSeed } from "./chat-reply.ts";
import { parseChatRequest } from "./chat-request.ts";
import { closeSignal, sleep, untilClosed } from "./connection.ts";
import { promptOverWindow } from "./context-window.ts";
import { countTokens, hexId, pickWords, stableHash } from "./deterministic-text.ts";
import { type FaultSource, type FaultSpec, parseFaultSpec, selectFaultSource } from "./faults.ts";
import { malformedData, writeChatStream } from "./openai-chat-stream.ts";
import {
  INVALID_API_KEY,
  openAIError,
  openAIErrorForStatus,
  sendOpenAIError,
} from "./openai-errors.ts";
import { vendorOfPath, vendorRefusal } from "./openai-model-rules.ts";
import { completionBody, type ResponseMeta, streamChunks } from "./openai-shapes.ts";
import type { SandboxState } from "./state.ts";

export const FAULT_HEADER = "x-sandbox-fault";
export const FAULT_KEY_HEADER = "x-sandbox-fault-key";
/** Status used by `fail-times` when the spec has no `status`. */
export const DEFAULT_FAIL_STATUS = 503;

/** True for any path ending in `/chat/completions` (`/openai/v1/…`, `/groq/openai/v1/…`, …). */
export function isChatCompletionsPath(path: string): boolean {
  return path.endsWith("/chat/completions");
}

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(";") : value;
}

function hasBearerKey(authorization: string | undefined): boolean {
  return authorization !== undefined && /^Bearer\s+\S+/i.test(authorization.trim());
}

function randomToken(bytes: number): string {
  return randomBytes(bytes).toString("base64url").replace(/[-_]/g, "x");
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

export async function handleChatCompletions(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const headers = { "x-request-id": `req_${randomBytes(16).toString("hex")}` };
  if (!hasBearerKey(request.headers.authorization)) {
    return sendOpenAIError(reply, 401, INVALID_API_KEY, headers);
  }
  const parsed = parseChatRequest(request.body);
  const refused = parsed.ok
    ? vendorRefusal(
        vendorOfPath(request.url),
        parsed.request.model,
        request.body as Record<string, unknown>,
      )
    : parsed.error;
  if (!parsed.ok || refused) {
    const { message, param, code } = parsed.ok ? refused! : parsed.error;
    return sendOpenAIError(
      reply,
      400,
      openAIError(message, "invalid_request_error", param, code),
      headers,
    );
  }
  const chat = parsed.request;
  const texts = chat.messages.map((message) => message.text);
  const tooLong = promptOverWindow(chat.model, texts, countPromptTokens(chat.messages));
  if (tooLong) {
    const message = `This model's maximum context length is ${tooLong.window} tokens. However, your messages resulted in ${tooLong.tokens} tokens. Please reduce the length of the messages.`;
    const body = openAIError(
      message,
      "invalid_request_error",
      "messages",
      "context_length_exceeded",
    );
    return sendOpenAIError(reply, 400, body, headers);
  }
  const source = selectFaultSource(headerText(request.headers, FAULT_HEADER), texts);
  const faultResult = source ? parseFaultSpec(source.spec) : parseFaultSpec("");
  if (!faultResult.ok) {
    const message = `Invalid sandbox fault spec '${source?.spec}': ${faultResult.message}.`;
    const body = openAIError(message, "invalid_request_error", null, "invalid_sandbox_fault");
    return sendOpenAIError(reply, 400, body, headers);
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
  if (status !== undefined) {
    const errorHeaders: Record<string, string> = { ...headers };
    if (fault.retryAfter !== undefined) errorHeaders["retry-after"] = fault.retryAfter;
    return sendOpenAIError(reply, status, openAIErrorForStatus(status), errorHeaders);
  }

  const reasoning = fault.reasoningWords
    ? `Thinking it over: ${pickWords(requestSeed(chat) ^ 0x5eed, fault.reasoningWords - 3).join(" ")}`
    : undefined;
  const plan = Array.from({ length: chat.choiceCount ?? 1 }, (_, choice) => {
    const planned = planChatReply(chat, { words: fault.words, choice, offSchema: fault.offSchema });
    return {
      ...planned,
      ...(reasoning
        ? { reasoning, completionTokens: planned.completionTokens + countTokens(reasoning) }
        : {}),
      cachedTokens: fault.cachedTokens,
      cacheWriteTokens: fault.cacheWriteTokens,
    };
  });
  const meta: ResponseMeta = {
    id: `chatcmpl-${randomToken(21)}`,
    created: Math.floor(Date.now() / 1000),
    model: chat.model,
    systemFingerprint: `fp_${hexId(stableHash(chat.model), 10)}`,
  };
  if (!chat.stream) {
    if (fault.dropAfter !== undefined) {
      reply.hijack();
      state.markDropped(reply.raw);
      reply.raw.socket?.destroy();
      return undefined;
    }
    const body = completionBody(meta, plan, !fault.noUsage);
    if (fault.malformedAfter !== undefined)
      return reply.code(200).headers(headers).type("application/json").send(malformedData(body));
    return reply.code(200).headers(headers).send(body);
  }

  reply.hijack();
  const chunks = streamChunks(meta, plan, {
    includeUsage: chat.includeUsage,
    omitUsageChunk: fault.noUsage,
  });
  const streamFaults = {
    chunkDelayMs: fault.chunkDelayMs ?? 0,
    dropAfter: fault.dropAfter,
    malformedAfter: fault.malformedAfter,
  };
  await writeChatStream(reply.raw, headers, chunks, streamFaults, {
    signal,
    onDrop: () => state.markDropped(reply.raw),
  });
  return undefined;
}
