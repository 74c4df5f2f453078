/**
 * @module sandbox/request-faults
 * Fault handling shared by the sandbox routes (Gemini, embeddings, images): the fault comes from the
 * `x-sandbox-fault` header, else the last `[[sandbox:…]]` directive in the input texts, and
 * works as it does for chat: a bad spec, `hang`, `delay`, `status` (with `retry-after` and
 * `fail-times`), then `drop` and `malformed` for the body. Each vendor supplies its error body.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { closeSignal, sleep, untilClosed } from "./connection.ts";
import { type FaultSpec, parseFaultSpec, selectFaultSource } from "./faults.ts";
import { DEFAULT_FAIL_STATUS, FAULT_HEADER, FAULT_KEY_HEADER } from "./openai-chat.ts";
import type { SandboxState } from "./state.ts";

/** How one vendor answers a bad fault spec and an injected status. */
export interface FaultErrors {
  badSpec(reply: FastifyReply, message: string): FastifyReply;
  status(reply: FastifyReply, status: number, headers: Record<string, string>): FastifyReply;
}

export type FaultPreflight = { fault: FaultSpec } | { done: FastifyReply | undefined };

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(";") : value;
}

/** Picks the fault and ends the exchange for the faults that come before a body. */
export async function faultPreflight(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  texts: readonly string[],
  errors: FaultErrors,
): Promise<FaultPreflight> {
  const source = selectFaultSource(headerText(request.headers, FAULT_HEADER), texts);
  const parsed = parseFaultSpec(source?.spec ?? "");
  if (!parsed.ok) {
    const message = `Invalid sandbox fault spec '${source?.spec}': ${parsed.message}.`;
    return { done: errors.badSpec(reply, message) };
  }
  const fault = parsed.fault;
  const signal = closeSignal(reply.raw);
  if (fault.hang) {
    reply.hijack();
    await untilClosed(signal);
    return { done: undefined };
  }
  if (!(await sleep(fault.delayMs ?? 0, signal))) {
    reply.hijack(); // the client left during the delay; there is nobody to answer
    return { done: undefined };
  }
  const key = headerText(request.headers, FAULT_KEY_HEADER) || (source?.spec ?? "");
  const status =
    fault.failTimes === undefined
      ? fault.status
      : state.shouldFail(key, fault.failTimes)
        ? (fault.status ?? DEFAULT_FAIL_STATUS)
        : undefined;
  if (status === undefined) return { fault };
  const headers: Record<string, string> =
    fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter };
  return { done: errors.status(reply, status, headers) };
}

/**
 * Sends a successful JSON body, honouring `drop` (cut the connection, no answer) and
 * `malformed` (send half of the JSON with status 200).
 */
export function sendEmbedBody(
  reply: FastifyReply,
  state: SandboxState,
  fault: FaultSpec,
  body: unknown,
  headers: Record<string, string> = {},
): FastifyReply | undefined {
  if (fault.dropAfter !== undefined) {
    reply.hijack();
    state.markDropped(reply.raw);
    reply.raw.socket?.destroy();
    return undefined;
  }
  if (fault.malformedAfter !== undefined) {
    const json = JSON.stringify(body);
    return reply
      .code(200)
      .headers(headers)
      .type("application/json")
      .send(json.slice(0, Math.floor(json.length / 2)));
  }
  return reply.code(200).headers(headers).send(body);
}

/** True when the `Authorization` header carries a bearer token. */
export function hasBearerKey(headers: IncomingHttpHeaders): boolean {
  const value = headers.authorization;
  return typeof value === "string" && /^Bearer\s+\S+/i.test(value.trim());
}
