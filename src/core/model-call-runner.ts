/**
 * @module core/model-call-runner
 * What a transport other than HTTP (the MCP endpoint) needs to run a model request through the
 * same pipeline as the HTTP API: model resolution, kind and allowlist checks, validation, the
 * quota lease, the billing hold, the operation, settlement and the usage record. The answer is
 * the same body the HTTP API would send; a refusal throws the same `GatewayError`.
 */
import type { Caller } from "../auth/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";

/** An authenticated caller with a key (model endpoints need one). */
export type KeyCaller = Caller & { key: ApiKeyRecord };

/** One model request, as a transport hands it to the core. */
export interface ModelCall {
  caller: KeyCaller;
  /** The request body as the HTTP endpoint reads it (for `/v1/images/edits`, the parsed form). */
  body: unknown;
  /** The request id used in logs, holds and usage records. */
  requestId: string;
  /** Aborted when the caller goes away (the upstream call is cancelled, delivered work billed). */
  signal: AbortSignal;
  /** Request headers, lower-cased (forwarded where an endpoint forwards any). */
  headers?: Record<string, string | string[] | undefined>;
}

/** What a model request answered, whole (a transport that cannot stream gets it at once). */
export interface ModelCallAnswer {
  /** The HTTP status the HTTP API answers with (200, or 202 for accepted tasks). */
  status: number;
  /** The JSON body (undefined for binary answers). */
  body?: unknown;
  /** Binary answers (speech audio), collected. */
  binary?: { contentType: string; bytes: Buffer };
  /** What the request was charged (µUSD); 0 for accepted tasks, which settle later. */
  costMicros: number;
  /** The canonical id of the model that served it. */
  model: string;
  /** Settings that were changed, ignored or dropped (the HTTP API's `x-switchyard-warnings`). */
  warnings: string[];
  /** True when the sandbox answered instead of the vendor. */
  sandbox: boolean;
}

/** Runs model requests by endpoint path (`/v1/chat/completions`, `/v1/audio/speech`, …). */
export interface ModelCallRunner {
  /** Paths this runner serves. */
  readonly paths: readonly string[];
  /** Runs one request; throws `GatewayError` exactly where the HTTP API answers an error. */
  run(path: string, call: ModelCall): Promise<ModelCallAnswer>;
}
