/**
 * @module providers/kit/upstream-context
 * Headers every upstream call of one request carries — the gateway's request id (`x-request-id`),
 * the client's own id (`x-client-request-id`) and the W3C trace context (`traceparent`,
 * `tracestate`) — added in one place, the HTTP client, not by each adapter.
 *
 * A request's context is bound to its abort signal, which every adapter already hands the client
 * with each call (`signal`): a `WeakMap` lookup per call, no async-context machinery (which
 * would slow every promise of the process). The context is read at each call, so the pipeline can
 * name each attempt's trace parent as the attempt starts. A signal derived from a request's (an
 * `AbortSignal.any`) is given the same context with `shareUpstreamContext`.
 */
import type { CallSignal } from "../../spec/index.ts";

/** Headers the calls of one request carry; `headers()` is read at each call. */
export interface UpstreamContext {
  headers(): Record<string, string>;
}

const contexts = new WeakMap<CallSignal, UpstreamContext>();

/** The calls made with `signal` carry `context`'s headers from now on. */
export function bindUpstreamContext(signal: CallSignal, context: UpstreamContext): void {
  contexts.set(signal, context);
}

/** `derived` (a signal made from `signal`) carries the same headers. */
export function shareUpstreamContext(signal: CallSignal | undefined, derived: CallSignal): void {
  const context = signal && contexts.get(signal);
  if (context) contexts.set(derived, context);
}

/** The headers for a call made with `signal`, if its request bound any. */
export function upstreamHeadersFor(
  signal: CallSignal | undefined,
): Record<string, string> | undefined {
  return signal ? contexts.get(signal)?.headers() : undefined;
}
