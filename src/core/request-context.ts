/**
 * @module core/request-context
 * What travels with a model request besides its body: the headers its upstream calls carry
 * (bound to its abort signal for the HTTP client, `providers/kit/upstream-context.ts`) and, when
 * the gateway traces, the attempt spans under its request span.
 *
 * Upstream calls always carry `x-request-id` (the gateway's id) and, when the client sent a valid
 * one, `x-client-request-id`. With tracing on they carry the current attempt's `traceparent`;
 * with tracing off a client's well-formed `traceparent`/`tracestate` is passed on unchanged.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import { bindUpstreamContext, shareUpstreamContext } from "../providers/index.ts";
import type { CallSignal } from "../spec/index.ts";
import { passThroughTraceHeaders, type RequestTrace } from "../telemetry/index.ts";
import { CallAbort } from "./call-abort.ts";

export { shareUpstreamContext } from "../providers/index.ts";

/**
 * A signal that is never aborted but carries `signal`'s upstream headers: for a call that must
 * not end with the client's connection (a video task's submission) yet belongs to its request.
 */
export function detachedSignal(signal: CallSignal): CallSignal {
  const detached = new CallAbort();
  shareUpstreamContext(signal, detached);
  return detached;
}

/** What `bindRequestContext` needs of a model request. */
export interface RequestContextInput {
  requestId: string;
  clientRequestId?: string | undefined;
  signal: CallSignal;
  headers: Record<string, string | string[] | undefined>;
  trace?: RequestTrace | undefined;
}

/** Binds the request's upstream headers to its signal. */
export function bindRequestContext(input: RequestContextInput): void {
  const ids: Record<string, string> = { "x-request-id": input.requestId };
  if (input.clientRequestId) ids["x-client-request-id"] = input.clientRequestId;
  const trace = input.trace;
  if (trace) {
    bindUpstreamContext(input.signal, { headers: () => ({ ...ids, ...trace.upstreamHeaders() }) });
    return;
  }
  const passed = passThroughTraceHeaders(input.headers);
  const fixed = passed ? { ...ids, ...passed } : ids;
  bindUpstreamContext(input.signal, { headers: () => fixed });
}

/**
 * The attempt spans of a traced request, in the shape `logAttempts` reports attempts to
 * (`routing`'s `AttemptTracing`; the core does not import the routing).
 */
export interface RequestAttemptTracing {
  attemptStarted(route: ResolvedRoute, index: number, startTime?: number): void;
  attemptEnded(
    attempt: { error?: { status?: number | undefined } | undefined; durationMs: number },
    outcome: string,
  ): void;
}

export function attemptTracing(trace: RequestTrace): RequestAttemptTracing {
  return {
    attemptStarted(route: ResolvedRoute, index: number, startTime?: number) {
      trace.attemptStarted(
        {
          vendor: route.vendor,
          upstreamModel: route.upstreamModel,
          index,
          sandbox: route.sandbox,
        },
        startTime,
      );
    },
    attemptEnded(attempt, outcome) {
      trace.attemptEnded({
        outcome,
        upstreamStatus: attempt.error?.status,
        durationMs: attempt.durationMs,
      });
    },
  };
}
