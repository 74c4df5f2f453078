/**
 * @module spec/upstream-error
 * The one error type adapters throw for a failed upstream call. Retry and fallback policy ask
 * `retryable` instead of keeping status lists of their own.
 */
const MARKER = Symbol.for("switchyard.upstream-error");

export type UpstreamFailureKind =
  | "http" // the upstream answered with an error status
  | "connect" // the connection could not be made
  | "timeout" // connect, first-byte or idle timeout
  | "protocol" // the upstream answered something we cannot read or parse
  | "too_large" // the answer (or one stream event) is larger than the gateway reads
  | "aborted"; // the client went away and we cancelled the call

export interface UpstreamErrorInit {
  kind: UpstreamFailureKind;
  message: string;
  status?: number;
  /** The vendor's error body, as parsed JSON when possible. */
  body?: unknown;
  /** The vendor's machine code, when its body has one. */
  vendorCode?: string;
  upstreamRequestId?: string;
  /** The upstream's `Retry-After`, in whole seconds, when it sent one. */
  retryAfterSeconds?: number;
  retryable?: boolean;
  cause?: unknown;
}

export class UpstreamError extends Error {
  readonly [MARKER] = true;
  readonly kind: UpstreamFailureKind;
  readonly status: number | undefined;
  readonly body: unknown;
  readonly vendorCode: string | undefined;
  readonly upstreamRequestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly retryable: boolean;

  constructor(init: UpstreamErrorInit) {
    super(init.message, { cause: init.cause });
    this.name = "UpstreamError";
    this.kind = init.kind;
    this.status = init.status;
    this.body = init.body;
    this.vendorCode = init.vendorCode;
    this.upstreamRequestId = init.upstreamRequestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.retryable = init.retryable ?? defaultRetryable(init.kind, init.status);
  }

  /** A copy with some fields changed; every other field, `retryable` included, is kept. */
  with(changes: Partial<UpstreamErrorInit>): UpstreamError {
    return new UpstreamError({
      kind: this.kind,
      message: this.message,
      status: this.status,
      body: this.body,
      vendorCode: this.vendorCode,
      upstreamRequestId: this.upstreamRequestId,
      retryAfterSeconds: this.retryAfterSeconds,
      retryable: this.retryable,
      cause: this.cause,
      ...changes,
    });
  }

  static isInstance(value: unknown): value is UpstreamError {
    return typeof value === "object" && value !== null && MARKER in value;
  }
}

function defaultRetryable(kind: UpstreamFailureKind, status: number | undefined): boolean {
  if (kind === "aborted" || kind === "protocol" || kind === "too_large") return false;
  if (kind === "connect" || kind === "timeout") return true;
  return (
    status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500)
  );
}
