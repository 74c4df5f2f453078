/**
 * @module spec/call-signal
 * What a model call reads of the signal that ends it: whether and why it was aborted, and an
 * abort listener. A Node `AbortSignal` is one; so is the gateway's own per-request abort
 * (`core/call-abort.ts`), which costs a fraction of an `AbortController` per request. Code that
 * needs a real `AbortSignal` (`AbortSignal.any`, `timers/promises`) makes one of its own and
 * links it with a listener.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}
