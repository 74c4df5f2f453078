/**
 * @module core/operation
 * The types of the transport-free model pipeline: what an endpoint declares (`ModelEndpoint`),
 * what its operation receives (`OperationContext`) and returns (`OperationResult`). The HTTP
 * layer and the MCP layer both run endpoints through `core/model-call`; neither is named here.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type {
  CostEstimate,
  PricedUsage,
  SettleDetails,
  Settlement,
  UsageAttribution,
} from "../billing/index.ts";
import type { CatalogModel, EndpointKind, ResolvedRoute } from "../catalog/index.ts";
import type { GatewayError } from "../errors/index.ts";
import type { CallSignal, CallWarning, Usage } from "../spec/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { OutputCapControl } from "./output-cap.ts";
import type { RequestAttemptTracing } from "./request-context.ts";
import type { Services } from "./services.ts";

/** The wire dialect errors are answered in (rendered by the HTTP layer). */
export type ErrorDialect = "gateway" | "provider" | "anthropic";

/** One event of a streamed answer; the HTTP layer writes it as Server-Sent Events. */
export interface StreamFrame {
  /** Named event (`event:` line); omitted for OpenAI-style unnamed events. */
  event?: string;
  /** Serialized as JSON, except the literal string `[DONE]`, which is sent as is. */
  data: unknown;
  /** The data already serialized (a chunk passed through from the upstream); `data` is unused. */
  json?: string;
  /**
   * Several frames written together in order (the events of one upstream read, relayed);
   * `data` is unused.
   */
  batch?: readonly StreamFrame[];
  /**
   * The frame that tells the client the upstream broke: what was delivered is settled before it
   * goes out (`core/deliver`), so the charge is on record when the client reads the ending.
   */
  interrupts?: boolean;
}

/** `frames` (an ending for a broken upstream) with the first marked as the one that `interrupts`. */
export function interruptionFrames(frames: readonly StreamFrame[]): StreamFrame[] {
  return frames.map((frame, at) => (at === 0 ? { ...frame, interrupts: true } : frame));
}

/** `frames` (not empty) as one frame: itself when there is one, else a batch. */
export function framesTogether(frames: readonly StreamFrame[]): StreamFrame {
  return frames.length === 1 ? frames[0]! : { data: undefined, batch: frames };
}

export interface OperationContext {
  requestId: string;
  accountId: string;
  key: ApiKeyRecord;
  model: CatalogModel;
  services: Services;
  /** Aborted when the client goes away. */
  signal: CallSignal;
  /** Request headers, lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /**
   * Charges the actual usage now (idempotent). Streams call it before their final frame (so the
   * last usage chunk shows the cost); JSON answers leave it to the pipeline (`usage`, `render`).
   */
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  /** Told of each route whose upstream was called; a sandbox route marks the response. */
  routeCalled(route: ResolvedRoute): void;
  /** The request's attempt spans, when the gateway traces (`logAttempts` reports to it). */
  tracing?: RequestAttemptTracing | undefined;
}

/** What every result may carry besides its body. */
interface ResultExtras {
  /** Endpoint-specific response headers (`x-switchyard-voice`, …). */
  headers?: Record<string, string>;
  /** Settings that were changed, ignored or dropped; sent once, by the transport. */
  warnings?: readonly CallWarning[];
}

export type OperationResult =
  | ({
      kind: "json";
      status?: number;
      /** What was used; the pipeline settles it (the one owner of a JSON answer's charge). */
      usage: Usage;
      /** Passed to the settlement (the upstream's request id, …). */
      settleDetails?: SettleDetails;
    } & (
      | { body: unknown }
      /** A body that shows the charge (`usage.cost_micros`), built once it is known. */
      | { render(settlement: Settlement): unknown }
    ) &
      ResultExtras)
  /** Work taken on for later (a video task): it owns its hold and its settlement. */
  | ({ kind: "accepted"; status: number; body: unknown } & ResultExtras)
  | ({
      kind: "stream";
      frames: AsyncIterable<StreamFrame>;
      /**
       * Usage delivered so far, read when the stream ends, is aborted or breaks (the larger of
       * the upstream's report and the gateway's own count of what it delivered), and for
       * checkpoints; `undefined` when the upstream failed before delivering anything, which is
       * charged nothing.
       */
      usage(): Promise<Usage | undefined>;
      /** True when the upstream broke mid-way (what was delivered is billed as `interrupted`). */
      interrupted?(): boolean;
      /**
       * The frames that end the stream when the gateway fails it after it started (its
       * settlement refused, the request given up), for a dialect whose ending the HTTP layer
       * cannot render alone (numbered events); without it the error is rendered in the
       * endpoint's dialect. The upstream's own failures are frames of the stream itself.
       */
      failed?(error: GatewayError): readonly StreamFrame[];
    } & ResultExtras)
  | ({
      /** Raw bytes (audio) delivered as they come; `usage` as for streams. */
      kind: "binary";
      contentType: string;
      body: AsyncIterable<Uint8Array>;
      usage(): Promise<Usage | undefined>;
      interrupted?(): boolean;
    } & ResultExtras);

/** The results delivered over time (a stream of events or of bytes). */
export type LongResult = Extract<OperationResult, { kind: "stream" | "binary" }>;

export interface ModelEndpoint<S extends TSchema> {
  method: "POST";
  path: string;
  summary: string;
  tags: string[];
  /** Catalog endpoint kinds this path serves. */
  kinds: EndpointKind[];
  body: S;
  /** Media type of the request body when it is not JSON (`multipart/form-data`), for OpenAPI. */
  bodyContentType?: string;
  response?: TSchema;
  /** Media types of a non-JSON success body (`audio/mpeg`, `audio/wav`), for OpenAPI. */
  responseContentType?: string | readonly string[];
  /** The success status when it is not 200 (a video task's submission: 202), for OpenAPI. */
  successStatus?: number;
  /** `stream: true` answers Server-Sent Events (`text/event-stream`), for OpenAPI. */
  streams?: boolean;
  dialect: ErrorDialect | ((model: CatalogModel | undefined) => ErrorDialect);
  /**
   * How a model name that resolves to nothing is answered: `404 model_not_found` with close ids
   * (the default), or, where the spec says so (speech, section 7), `400 endpoint_model_mismatch`.
   */
  unknownModel?: "model_not_found" | "endpoint_model_mismatch";
  /** OpenAI's protocol: an explicit `null` in an optional field is read as the field left out. */
  nullMeansAbsent?: boolean;
  /** Rules of the model beyond the schema (sizes, voices, dimensions...). Throws GatewayError. */
  validateForModel?(body: Static<S>, model: CatalogModel): void;
  /**
   * Loads what the request refers to beyond its body (the stored conversation a Responses
   * request continues) before the quota lease and the hold, so the hold covers it; returns the
   * body the rest of the pipeline sees. Throws GatewayError.
   */
  resolve?(
    body: Static<S>,
    context: { accountId: string; services: Services; model: CatalogModel },
  ): Promise<Static<S>>;
  /**
   * Who the request is for (`user`, `metadata`), recorded on its usage record; OpenAI's fields
   * when not given (`core/attribution.ts`). Throws GatewayError for a value too large.
   */
  attribution?(body: Static<S>): UsageAttribution | undefined;
  /** The most this request can cost (the billing hold), itemized; also serves `/v1/billing/quote`. */
  estimateCost?(body: Static<S>, model: CatalogModel): Promise<CostEstimate>;
  /**
   * The operation places its own durable hold and settles it later (video tasks): the pipeline
   * places none and answers `accepted` results without a charge. `estimateCost` still quotes.
   */
  holdsItself?: boolean;
  /** Token endpoints: the output cap sent upstream (always explicit; lowered to fit the balance). */
  outputCap?: OutputCapControl<Static<S>>;
  run(body: Static<S>, context: OperationContext): Promise<OperationResult>;
}

/** What a quote needs of each model endpoint, by catalog endpoint kind. */
export interface QuoteTarget {
  path: string;
  validate(body: unknown): unknown;
  estimateCost?(body: unknown, model: CatalogModel): Promise<PricedUsage>;
}

/** The dialect an endpoint answers in for a model (or before the model is known). */
export function dialectFor(
  endpoint: Pick<ModelEndpoint<TSchema>, "dialect">,
  model: CatalogModel | undefined,
): ErrorDialect {
  return typeof endpoint.dialect === "function" ? endpoint.dialect(model) : endpoint.dialect;
}
