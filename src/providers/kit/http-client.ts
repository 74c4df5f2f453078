/**
 * @module providers/kit/http-client
 * The one way adapters call upstreams: undici with connect, first-byte and idle timeouts, abort
 * support, a total deadline for the calls that ask (`answer-deadline.ts`), response bodies
 * bounded in size (`bounded-body.ts`), every failure turned into an `UpstreamError`, and the
 * request's id and trace context added to every call (`upstream-context.ts`). Adapters use it
 * through `upstream-call.ts`.
 */
import type { LookupFunction } from "node:net";
import { Agent, type Dispatcher, request, errors as undiciErrors } from "undici";
import { type CallSignal, UpstreamError } from "../../spec/index.ts";
import { answerTimeoutError, startAnswerDeadline } from "./answer-deadline.ts";
import { boundedBody, declaredLength, type RawBody, type UpstreamBody } from "./bounded-body.ts";
import { createDeadlineSweeper, type DeadlineSweeper } from "./deadline-sweeper.ts";
import { upstreamHeadersFor } from "./upstream-context.ts";

export interface UpstreamTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
}

/** The most the client reads of one answer; past it reading fails with `too_large`. */
export interface UpstreamLimits {
  /** A whole answer (JSON, a downloaded file), in bytes. */
  maxResponseBytes: number;
  /** An event stream (a call that accepts `text/event-stream`), in bytes over its whole life. */
  maxStreamBytes: number;
}

export const DEFAULT_LIMITS: UpstreamLimits = {
  maxResponseBytes: 64 * 1024 * 1024,
  maxStreamBytes: 256 * 1024 * 1024,
};

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export interface RequestInit {
  headers: Record<string, string>;
  signal?: CallSignal;
  /** Overrides the client's first-byte and idle timeouts for this call. */
  timeouts?: Partial<Pick<UpstreamTimeouts, "firstByteMs" | "idleMs">>;
  /**
   * The whole answer, body included, must arrive within this call's first-byte timeout plus its
   * idle timeout; past that the call fails as a `timeout`, however steadily the body trickles.
   */
  totalDeadline?: boolean;
}

export interface HttpClient {
  /** `body` is JSON text, or raw bytes (e.g. a multipart form for image edits). */
  post(url: string, init: RequestInit & { body: string | Uint8Array }): Promise<UpstreamResponse>;
  get(url: string, init: RequestInit): Promise<UpstreamResponse>;
  /**
   * GETs a file at a URL an upstream's answer named (not a configured base URL): the URL is
   * vetted first (`HttpClientOptions.vetDownload`: public addresses only, say) and the
   * connection goes only to the addresses vetted, so a vendor's answer cannot point the gateway
   * at its own network.
   */
  download(url: string, init: RequestInit): Promise<UpstreamResponse>;
  /** A client whose calls use these timeouts unless a call says otherwise (per-route timeouts). */
  withTimeouts(timeouts: Partial<Pick<UpstreamTimeouts, "firstByteMs" | "idleMs">>): HttpClient;
  close(): Promise<void>;
}

/**
 * First-byte timeouts from this long on are left to undici's timer (about 0.5 s resolution, a
 * few percent at most), and total deadlines to the client's sweeper (about 1 s); shorter ones get
 * a precise timer of their own.
 */
const COARSE_TIMER_MIN_MS = 10_000;

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  idleMs: 120_000,
};

/** Whether a call asked for an event stream (its `accept` header names `text/event-stream`). */
function acceptsStream(headers: Record<string, string>): boolean {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "accept" && value.includes("text/event-stream")) return true;
  }
  return false;
}

/** Where a download may connect: a DNS lookup that answers only the vetted addresses. */
export interface DownloadTarget {
  lookup: LookupFunction;
}

export interface HttpClientOptions {
  /**
   * Vets a URL an upstream named before `download` connects to it; throws to refuse it. Without
   * it, `download` is `get`.
   */
  vetDownload?(url: string): Promise<DownloadTarget>;
  /** Where long total deadlines are kept (default: a sweeper of the client's own). */
  deadlines?: DeadlineSweeper;
}

export function createHttpClient(
  timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
  limits: UpstreamLimits = DEFAULT_LIMITS,
  options: HttpClientOptions = {},
): HttpClient {
  const dispatcher = new Agent({
    connect: { timeout: timeouts.connectMs },
    // The first-byte timeout is our own precise timer (undici's has about 1 s resolution).
    headersTimeout: 0,
    bodyTimeout: timeouts.idleMs,
    keepAliveTimeout: 30_000,
    connections: 256,
  });
  const deadlines = options.deadlines ?? createDeadlineSweeper({ expired: answerTimeoutError });
  const forgetDeadline = (body: RawBody) => deadlines.forget(body);

  async function send(
    method: "GET" | "POST",
    url: string,
    init: RequestInit & { body?: string | Uint8Array },
    through: Dispatcher = dispatcher,
  ): Promise<UpstreamResponse> {
    if (!init.totalDeadline) return exchange(method, url, init, through);
    const totalMs =
      (init.timeouts?.firstByteMs ?? timeouts.firstByteMs) +
      (init.timeouts?.idleMs ?? timeouts.idleMs);
    // A long deadline costs the call nothing but an entry in the sweeper's list: the head is
    // bounded by the first-byte timeout already, and a body still open at the deadline is
    // destroyed with the timeout error.
    if (totalMs >= COARSE_TIMER_MIN_MS)
      return exchange(method, url, init, through, deadlines.now() + totalMs, totalMs);
    const deadline = startAnswerDeadline(totalMs, init.signal);
    try {
      const response = await exchange(method, url, { ...init, signal: deadline.signal }, through);
      return { ...response, body: deadline.guard(response.body) };
    } catch (error) {
      deadline.end();
      throw deadline.explain(error);
    }
  }

  async function exchange(
    method: "GET" | "POST",
    url: string,
    init: RequestInit & { body?: string | Uint8Array },
    through: Dispatcher,
    deadlineAt?: number,
    totalMs = 0,
  ): Promise<UpstreamResponse> {
    const firstByteMs = init.timeouts?.firstByteMs ?? timeouts.firstByteMs;
    const idleMs = init.timeouts?.idleMs ?? timeouts.idleMs;
    const stream = acceptsStream(init.headers);
    const limit = stream ? limits.maxStreamBytes : limits.maxResponseBytes;
    const answer = (response: Awaited<ReturnType<typeof request>>): UpstreamResponse => {
      if (deadlineAt !== undefined) deadlines.watch(response.body, deadlineAt, totalMs);
      return {
        status: response.statusCode,
        headers: response.headers,
        body: boundedBody(
          response.body,
          limit,
          declaredLength(response.headers["content-length"]),
          stream ? "stream" : "answer",
          deadlineAt === undefined ? undefined : forgetDeadline,
        ),
      };
    };
    const firstByteError = (cause: unknown) =>
      new UpstreamError({
        kind: "timeout",
        message: `No response from the upstream within ${firstByteMs} ms.`,
        cause,
      });
    // The request's id and trace context (bound to its signal), after the adapter's own headers.
    const context = upstreamHeadersFor(init.signal);
    const headers = context ? { ...init.headers, ...context } : init.headers;
    // Undici takes any signal with `aborted`, `reason` and the abort listener methods: the
    // gateway's own per-request abort (`core/call-abort.ts`) goes straight in.
    const issue = (signal: CallSignal | undefined, headersTimeout: number | undefined) =>
      request(url, {
        method,
        headers,
        body: init.body,
        signal,
        headersTimeout,
        bodyTimeout: idleMs,
        dispatcher: through,
      });
    if (firstByteMs >= COARSE_TIMER_MIN_MS) {
      // Long timeouts (the default is two minutes) use undici's own timer: it is coarse (about
      // half a second) but costs nothing per request, and the caller's signal goes straight in.
      try {
        return answer(await issue(init.signal, firstByteMs));
      } catch (error) {
        if (error instanceof undiciErrors.HeadersTimeoutError) throw firstByteError(error);
        throw toUpstreamError(error, init.signal);
      }
    }
    // Short timeouts need a precise timer: one controller per call, aborted by the timer or by
    // the caller's signal (a listener, not `AbortSignal.any`, which costs far more per request).
    // The listener is removed when the response body closes, so a long-lived caller signal
    // collects none.
    const upstream = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      upstream.abort();
    }, firstByteMs);
    const caller = init.signal;
    const onCallerAbort = () => upstream.abort(caller?.reason);
    if (caller?.aborted) upstream.abort(caller.reason);
    else caller?.addEventListener("abort", onCallerAbort, { once: true });
    const detach = () => caller?.removeEventListener("abort", onCallerAbort);
    try {
      const response = await issue(upstream.signal, undefined);
      if (caller) response.body.once("close", detach);
      return answer(response);
    } catch (error) {
      detach();
      if (timedOut && !caller?.aborted) throw firstByteError(error);
      throw toUpstreamError(error, caller);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A GET of a vetted URL, through a connection of its own pinned to the vetted addresses. */
  async function download(url: string, init: RequestInit): Promise<UpstreamResponse> {
    const vet = options.vetDownload;
    if (!vet) return send("GET", url, init);
    let target: DownloadTarget;
    try {
      target = await vet(url);
    } catch (error) {
      throw new UpstreamError({
        kind: "protocol",
        message: `The upstream named a file the gateway does not fetch (${error instanceof Error ? error.message : String(error)}).`,
        cause: error,
      });
    }
    const pinned = new Agent({
      connect: { timeout: timeouts.connectMs, lookup: target.lookup },
      headersTimeout: 0,
      bodyTimeout: timeouts.idleMs,
      connections: 1,
    });
    try {
      return await send("GET", url, init, pinned);
    } finally {
      // A graceful close: the connection ends once the body has been read (or dropped).
      void pinned.close();
    }
  }

  function client(defaults: RequestInit["timeouts"]): HttpClient {
    const merge = <T extends RequestInit>(init: T): T =>
      defaults ? { ...init, timeouts: { ...defaults, ...init.timeouts } } : init;
    return {
      post: (url, init) => send("POST", url, merge(init)),
      get: (url, init) => send("GET", url, merge(init)),
      download: (url, init) => download(url, merge(init)),
      withTimeouts: (overrides) => client({ ...defaults, ...overrides }),
      close: () => {
        deadlines.close();
        return dispatcher.close();
      },
    };
  }
  return client(undefined);
}

/** Maps a network-level failure (not an HTTP status) to an `UpstreamError`. */
export function toUpstreamError(error: unknown, signal?: CallSignal): UpstreamError {
  if (UpstreamError.isInstance(error)) return error;
  if (signal?.aborted)
    return new UpstreamError({
      kind: "aborted",
      message: "The request was aborted.",
      cause: error,
    });
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new UpstreamError({
      kind: "timeout",
      message: `Upstream timed out (${error.code}).`,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  // Not a network failure: an answer the adapter could not read (bad JSON, an unexpected shape).
  if (error instanceof SyntaxError || error instanceof TypeError)
    return new UpstreamError({
      kind: "protocol",
      message: `Upstream sent an answer the gateway could not read: ${message}`,
      cause: error,
    });
  // The client sees the kind of failure only: the network library's text names the upstream's
  // address (`connect ECONNREFUSED 10.0.0.7:8000`, `getaddrinfo ENOTFOUND inference.internal`),
  // which is the operator's business. The whole error stays the cause, for the logs.
  return new UpstreamError({
    kind: "connect",
    message: `Upstream connection failed (${connectFailure(error)}).`,
    cause: error,
  });
}

const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  UND_ERR_SOCKET: "connection closed by the upstream",
  UND_ERR_CLOSED: "connection closed",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNABORTED: "connection aborted",
};

/** A failed connection's kind in words, from the error's code or its cause's. */
function connectFailure(error: unknown): string {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 4; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === "string" && CONNECT_FAILURES[code]) return CONNECT_FAILURES[code];
    at = at.cause;
  }
  return "network error";
}

export function headerValue(
  headers: UpstreamResponse["headers"],
  name: string,
): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
