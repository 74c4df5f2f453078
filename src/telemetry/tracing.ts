/**
 * @module telemetry/tracing
 * Request traces, as the rest of the gateway sees them: `startRequestTrace` opens the SERVER
 * span of one client request (the child of an incoming W3C `traceparent`, when the client sent a
 * valid one) and answers a `RequestTrace`, which the pipeline describes (model, account, key id,
 * tokens, cost), which opens one CLIENT span per upstream attempt, and which names the
 * `traceparent`/`tracestate` to send upstream (the current attempt's span as the parent).
 *
 * Only `@opentelemetry/api` types and the W3C propagator are used here; the tracer itself (an SDK
 * provider with its exporter) is built by `src/main.ts` (`otlp-tracing.ts`) and handed over in
 * `services.tracer`. Without one nothing here runs: no span, no context, no work per request.
 * Attribute names follow the OpenTelemetry semantic conventions (`http.*`, `gen_ai.*`);
 * Switchyard's own facts are `switchyard.*`. Prompts and answers are never recorded.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/** The tracer the gateway's spans are made with (`services.tracer`). */
export type GatewayTracer = Tracer;

const propagator = new W3CTraceContextPropagator();

type HeaderBag = Record<string, string | string[] | undefined>;

const headerGetter: TextMapGetter<HeaderBag> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/**
 * `gen_ai.provider.name` of a catalog vendor key: the well-known value where the conventions
 * name one, else the vendor key itself (a custom value, as the conventions allow).
 */
const PROVIDER_NAMES: Record<string, string> = {
  openai: "openai",
  anthropic: "anthropic",
  gemini: "gcp.gemini",
  xai: "x_ai",
  mistral: "mistral_ai",
  deepseek: "deepseek",
  groq: "groq",
  dashscope: "alibaba.dashscope",
};

export function providerName(vendor: string): string {
  return PROVIDER_NAMES[vendor] ?? vendor;
}

/** `gen_ai.operation.name` of a model endpoint (by its path). */
export function operationName(endpoint: string): string {
  if (endpoint.includes("embeddings")) return "embeddings";
  if (endpoint.includes("images") || endpoint.includes("audio") || endpoint.includes("videos"))
    return "generate_content";
  return "chat";
}

/** `gen_ai.output.type` of a model endpoint whose output is not text. */
function outputType(endpoint: string): string | undefined {
  if (endpoint.includes("images")) return "image";
  if (endpoint.includes("audio")) return "speech";
  if (endpoint.includes("videos")) return "video";
  return undefined;
}

/** What the pipeline knows of a model request once its model is resolved. */
export interface ModelCallDescription {
  endpoint: string;
  model: string;
  accountId: string;
  keyId: string;
  requestId: string;
  clientRequestId?: string | undefined;
}

/** What the pipeline knows once a model request is completed and settled. */
export interface ModelCallCompletion {
  vendor?: string | undefined;
  upstreamModel?: string | undefined;
  stream: boolean;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  costMicros: number;
  aborted: boolean;
}

/** One upstream attempt as it starts. */
export interface AttemptStart {
  vendor: string;
  upstreamModel: string;
  /** 0 for the first route tried, 1 for the first fallback, … */
  index: number;
  sandbox: boolean;
}

/** One upstream attempt as it ended. */
export interface AttemptEnd {
  /** `switchyard_upstream_attempts_total`'s outcome (`ok`, `timeout`, `server_error`, …). */
  outcome: string;
  /** The vendor's HTTP status, when it answered with an error. */
  upstreamStatus?: number | undefined;
  durationMs: number;
}

/** The trace of one client request: its SERVER span and the attempt spans under it. */
export class RequestTrace {
  readonly span: Span;
  readonly #tracer: Tracer;
  readonly #context: Context;
  #endpoint = "";
  #model = "";
  #attempt: Span | undefined;
  #attemptContext: Context | undefined;
  /** A model call is under way: the span waits for it to record its outcome before ending. */
  #callUnderWay = false;
  /** How the response ended, once it has, while the span waits for the model call. */
  #ended: { status: number; errorCode: string | undefined; at: number } | undefined;
  #finished = false;
  #waiting: ReturnType<typeof setTimeout> | undefined;

  constructor(tracer: Tracer, span: Span) {
    this.#tracer = tracer;
    this.span = span;
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  /** The W3C trace context to send upstream: the current attempt's span, else the request's. */
  upstreamHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    propagator.inject(this.#attemptContext ?? this.#context, headers, headerSetter);
    return headers;
  }

  /** The request is a model call: its endpoint, model, caller (ids only) and request ids. */
  describe(call: ModelCallDescription): void {
    this.#callUnderWay = true;
    this.#endpoint = call.endpoint;
    this.#model = call.model;
    this.span.setAttributes({
      "switchyard.endpoint": call.endpoint,
      "switchyard.model": call.model,
      "gen_ai.request.model": call.model,
      "gen_ai.operation.name": operationName(call.endpoint),
      "switchyard.account_id": call.accountId,
      "switchyard.key_id": call.keyId,
      "switchyard.request_id": call.requestId,
      ...(call.clientRequestId ? { "switchyard.client_request_id": call.clientRequestId } : {}),
    });
  }

  /** The model call completed: what served it, its tokens and its charge. */
  completed(facts: ModelCallCompletion): void {
    const attributes: Attributes = {
      "switchyard.stream": facts.stream,
      "switchyard.cost_micros": facts.costMicros,
    };
    if (facts.vendor !== undefined) {
      attributes["switchyard.vendor"] = facts.vendor;
      attributes["gen_ai.provider.name"] = providerName(facts.vendor);
    }
    if (facts.upstreamModel !== undefined)
      attributes["switchyard.upstream_model"] = facts.upstreamModel;
    if (facts.inputTokens !== undefined)
      attributes["gen_ai.usage.input_tokens"] = facts.inputTokens;
    if (facts.outputTokens !== undefined)
      attributes["gen_ai.usage.output_tokens"] = facts.outputTokens;
    if (facts.aborted) attributes["switchyard.aborted"] = true;
    this.span.setAttributes(attributes);
  }

  /** Opens the span of an upstream attempt; calls made until `attemptEnded` are its children. */
  attemptStarted(start: AttemptStart, startTime?: number): void {
    this.#attempt?.end();
    const operation = operationName(this.#endpoint);
    const provider = providerName(start.vendor);
    const output = outputType(this.#endpoint);
    const attributes: Attributes = {
      "gen_ai.operation.name": operation,
      "gen_ai.provider.name": provider,
      "gen_ai.system": provider,
      "gen_ai.request.model": start.upstreamModel,
      "switchyard.vendor": start.vendor,
      "switchyard.model": this.#model,
      "switchyard.attempt": start.index,
      "switchyard.sandbox": start.sandbox,
    };
    if (output) attributes["gen_ai.output.type"] = output;
    this.#attempt = this.#tracer.startSpan(
      `${operation} ${start.upstreamModel}`,
      { kind: SpanKind.CLIENT, attributes, ...(startTime !== undefined ? { startTime } : {}) },
      this.#context,
    );
    this.#attemptContext = trace.setSpan(this.#context, this.#attempt);
  }

  /** Closes the current attempt's span with how it ended. */
  attemptEnded(end: AttemptEnd): void {
    const span = this.#attempt;
    if (!span) return;
    this.#attempt = undefined;
    this.#attemptContext = undefined;
    span.setAttribute("switchyard.outcome", end.outcome);
    span.setAttribute("switchyard.latency_ms", Math.round(end.durationMs));
    if (end.upstreamStatus !== undefined)
      span.setAttribute("http.response.status_code", end.upstreamStatus);
    if (end.outcome !== "ok") {
      span.setAttribute("error.type", end.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  /**
   * The model call is over (answered, failed or delivered): a response that already ended
   * (a client that hung up mid-stream) ends its span now, with the call's outcome on it.
   */
  callEnded(): void {
    this.#callUnderWay = false;
    if (this.#ended) this.#finish();
  }

  /**
   * The response ended with the status sent (5xx is an error; 4xx is the client's). While a
   * model call is still under way (a client that left: its settlement and attempt come later)
   * the span ends when the call does, at this moment's time, or after a minute at the latest.
   */
  end(status: number, errorCode: string | undefined): void {
    if (this.#ended || this.#finished) return;
    this.#ended = { status, errorCode, at: Date.now() };
    if (!this.#callUnderWay) {
      this.#finish();
      return;
    }
    this.#waiting = setTimeout(() => this.#finish(), CALL_WAIT_MS);
    this.#waiting.unref?.();
  }

  #finish(): void {
    const ended = this.#ended;
    if (this.#finished || !ended) return;
    this.#finished = true;
    clearTimeout(this.#waiting);
    // An attempt still open has lost its client (or its call never said how it ended).
    if (this.#attempt) this.attemptEnded({ outcome: "aborted", durationMs: 0 });
    this.span.setAttribute("http.response.status_code", ended.status);
    if (ended.errorCode !== undefined) this.span.setAttribute("error.type", ended.errorCode);
    if (ended.status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end(ended.at);
  }
}

/** The longest a request span waits, after its response ended, for its model call's outcome. */
const CALL_WAIT_MS = 60_000;

/** What `startRequestTrace` needs of an HTTP request. */
export interface TracedRequest {
  method: string;
  /** The route template (`/v1/chat/completions`); undefined when no route matched. */
  route: string | undefined;
  scheme: string;
  headers: HeaderBag;
}

/**
 * Opens the SERVER span of a client request: the child of the client's `traceparent` (and
 * `tracestate`) when it sent a valid one, else the root of a new trace.
 */
export function startRequestTrace(tracer: Tracer, request: TracedRequest): RequestTrace {
  const parent =
    request.headers.traceparent === undefined
      ? ROOT_CONTEXT
      : propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
  const method = KNOWN_METHODS.has(request.method) ? request.method : "_OTHER";
  const attributes: Attributes = {
    "http.request.method": method,
    "url.scheme": request.scheme,
  };
  if (request.route !== undefined) attributes["http.route"] = request.route;
  const agent = request.headers["user-agent"];
  // A client's header, cut to a size that cannot bloat every span it sends.
  if (typeof agent === "string")
    attributes["user_agent.original"] = agent.slice(0, USER_AGENT_MAX_CHARS);
  // The conventions' names: `{method} {route}`, `{method}` without a route, `HTTP` for a
  // method outside the known ones.
  const verb = method === "_OTHER" ? "HTTP" : method;
  const name = request.route === undefined ? verb : `${verb} ${request.route}`;
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return new RequestTrace(tracer, span);
}

/** The most of a `User-Agent` header a span records. */
const USER_AGENT_MAX_CHARS = 512;

/** The HTTP methods the conventions name; any other is recorded as `_OTHER`. */
const KNOWN_METHODS = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "CONNECT",
  "TRACE",
]);

const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;
/** At least this much of `tracestate` is passed on (the W3C minimum). */
const TRACESTATE_MAX_CHARS = 512;

/**
 * The client's W3C trace context, unchanged, for a gateway that does not trace: a well-formed
 * `traceparent` (and its `tracestate`, when not too long) is passed on so the vendor's spans
 * still join the client's trace. Anything malformed is dropped.
 */
export function passThroughTraceHeaders(headers: HeaderBag): Record<string, string> | undefined {
  const parent = headers.traceparent;
  if (typeof parent !== "string") return undefined;
  const value = parent.trim().toLowerCase();
  if (!TRACEPARENT.test(value) || value.startsWith("ff")) return undefined;
  const ids = value.split("-");
  if (/^0+$/.test(ids[1]!) || /^0+$/.test(ids[2]!)) return undefined;
  const state = headers.tracestate;
  const joined = Array.isArray(state) ? state.join(",") : state;
  return joined && joined.length <= TRACESTATE_MAX_CHARS
    ? { traceparent: value, tracestate: joined }
    : { traceparent: value };
}
