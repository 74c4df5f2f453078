/**
 * @module providers/kit/upstream-context
 * Headers every upstream call of one request carries — the gateway's request id (`x-request-id`),
 * the client's own id (`x-client-request-id`) and the W3C trace context (`traceparent`,
 * `tracestate`) — added in one place, the HTTP client, not by each adapter.
 *
 * A request's context is bound to its abort signal, which every adapter already hands the client
 * with each call (`signal`): a property read per call, no async-context machinery (which
 * would slow every promise of the process). The context is read at each call, so the pipeline can
 * name each attempt's trace parent as the attempt starts. A signal derived from a request's (an
 * `AbortSignal.any`) is given the same context with `shareUpstreamContext`.
 */
import type { CallSignal } from "../../spec/index.ts";

/** Headers the calls of one request carry; `headers()` is read at each call. */
export interface UpstreamContext {
  headers(): Record<string, string>;
}

/**
 * The context rides on the signal itself, under a symbol of this module, not in a `WeakMap`
 * keyed by it: V8's young-generation collector keeps an old `WeakMap`'s values alive, so each
 * request's context (its headers' closure and objects) outlived the request into the old
 * generation (docs/performance.md). A signal is an ordinary extensible object; the property is
 * added the same way to every one, so V8 shares one map for them.
 */
const CONTEXT = Symbol("switchyard.upstreamContext");
type ContextCarrier = CallSignal & { [CONTEXT]?: UpstreamContext };

/** The calls made with `signal` carry `context`'s headers from now on. */
export function bindUpstreamContext(signal: CallSignal, context: UpstreamContext): void {
  (signal as ContextCarrier)[CONTEXT] = context;
}

/** `derived` (a signal made from `signal`) carries the same headers. */
export function shareUpstreamContext(signal: CallSignal | undefined, derived: CallSignal): void {
  const context = (signal as ContextCarrier | undefined)?.[CONTEXT];
  if (context) (derived as ContextCarrier)[CONTEXT] = context;
}

/** The headers for a call made with `signal`, if its request bound any. */
export function upstreamHeadersFor(
  signal: CallSignal | undefined,
): Record<string, string> | undefined {
  return (signal as ContextCarrier | undefined)?.[CONTEXT]?.headers();
}
