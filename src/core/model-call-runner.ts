/**
 * @module core/model-call-runner
 * What a transport other than HTTP (the MCP endpoint) needs to run a model request through the
 * same pipeline as the HTTP API: model resolution, kind and allowlist checks, validation, the
 * quota lease, the billing hold, the operation, settlement and the usage record. The answer is
 * the same body the HTTP API would send; a refusal throws the same `GatewayError`.
 */
import type { Caller } from "../auth/index.ts";
import { GatewayError } from "../errors/index.ts";
import { type CallSignal, formatWarning } from "../spec/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { DeliverySink } from "./deliver.ts";
import type { ModelEndpointSet } from "./model-endpoints.ts";
import type { StreamFrame } from "./operation.ts";

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
  signal: CallSignal;
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

/** Most bytes a binary answer (speech) may collect for a transport that cannot stream. */
const MAX_COLLECTED_BYTES = 64 * 1024 * 1024;

/** The runner over the gateway's model endpoints: the HTTP pipeline minus HTTP. */
export function createModelCallRunner(
  endpoints: ModelEndpointSet,
  options: { via: "mcp" } = { via: "mcp" },
): ModelCallRunner {
  return {
    get paths() {
      return endpoints.paths();
    },
    async run(path, call) {
      const prepared = endpoints.get(path);
      if (!prepared) throw new Error(`No model endpoint at ${path}.`);
      const outcome = await prepared.call({
        caller: call.caller,
        body: call.body,
        requestId: call.requestId,
        signal: call.signal,
        headers: call.headers ?? {},
        started: performance.now(),
        via: options.via,
      });
      const answer = {
        status: outcome.status,
        model: outcome.model.id,
        warnings: [...new Set(outcome.warnings.map(formatWarning))],
        sandbox: outcome.sandbox,
      };
      if (outcome.kind !== "long") {
        return { ...answer, body: outcome.body, costMicros: outcome.costMicros };
      }
      const collected = collectingSink();
      const costMicros = await outcome.deliver(collected.sink);
      const result = collected.result();
      return { ...answer, costMicros, ...result };
    },
  };
}

/**
 * A sink that keeps a long result whole: bytes are concatenated (speech), events are kept in
 * order (a transport asked for a stream gets its frames). Nothing reaches the caller before the
 * result is whole, so a delivery that broke or was aborted is charged nothing (`wholeOnly`), and
 * a broken one throws `upstream_error`.
 */
function collectingSink(): {
  sink: DeliverySink;
  result(): { binary?: { contentType: string; bytes: Buffer }; body?: unknown };
} {
  const chunks: Buffer[] = [];
  const frames: unknown[] = [];
  let contentType = "application/octet-stream";
  let size = 0;
  let failed = false;
  let binary = false;
  const sink: DeliverySink = {
    wholeOnly: true,
    open(result) {
      if (result.kind === "binary") {
        binary = true;
        contentType = result.contentType;
      }
    },
    async pump(result, signal) {
      if (result.kind === "binary") {
        for await (const chunk of result.body) {
          if (signal.aborted) break;
          size += chunk.byteLength;
          if (size > MAX_COLLECTED_BYTES) throw new Error("The answer is too large to collect.");
          chunks.push(Buffer.from(chunk));
        }
        return;
      }
      const collect = (frame: StreamFrame): void => {
        if (frame.batch) for (const one of frame.batch) collect(one);
        else frames.push(frame.json === undefined ? frame.data : JSON.parse(frame.json));
      };
      for await (const frame of result.frames) {
        if (signal.aborted) break;
        collect(frame);
      }
    },
    close(_result, outcome) {
      failed = outcome.failed;
    },
  };
  return {
    sink,
    result() {
      if (failed) {
        throw new GatewayError("upstream_error", {
          detail: `the ${binary ? "audio" : "stream"} broke after ${binary ? `${size} bytes` : `${frames.length} events`}.`,
        });
      }
      return binary
        ? { binary: { contentType, bytes: Buffer.concat(chunks) } }
        : { body: frames.filter((data) => data !== "[DONE]") };
    },
  };
}
