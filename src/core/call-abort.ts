/**
 * @module core/call-abort
 * The abort of one request or delivery: a `CallSignal` with `abort()`. Not an `AbortController`:
 * Node's `AbortSignal` is an `EventTarget` whose maps V8 keeps in the old generation, about a
 * kilobyte promoted per request and 6 % of a stream's CPU (docs/performance.md). Undici takes it
 * as a request's signal (it asks only for `aborted`, `reason` and the two listener methods).
 * Listeners are called once, when it aborts, in the order they were added; one that throws does
 * not keep the others from running, and the first error is thrown by `abort()` after them.
 */
import type { CallSignal } from "../spec/index.ts";

export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Array<() => void> | undefined;

  /** Aborts with `reason` (an `AbortError` like `AbortController.abort()`'s when none). */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException("This operation was aborted", "AbortError");
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (!listeners) return;
    // Like an `EventTarget`, a listener that throws does not keep the others from running.
    let failed = false;
    let failure: unknown;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed) throw failure;
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    if (this.#listeners) this.#listeners.push(listener);
    else this.#listeners = [listener];
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const listeners = this.#listeners;
    if (!listeners) return;
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }
}
