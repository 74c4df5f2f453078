/**
 * @module http/model-endpoint
 * The request pipeline, written once for every model endpoint:
 * request id → authenticate → resolve model → endpoint kind → key allowlist → vendor configured →
 * validate (schema, then the model's own rules) → quota lease → billing hold → operation →
 * settle → log. A response the sandbox answered is marked `x-switchyard-sandbox: true`.
 * An endpoint is a declaration (`ModelEndpoint`); this module runs it.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Caller, readBearer } from "../auth/index.ts";
import type {
  CostEstimate,
  PricedUsage,
  Reservation,
  SettleDetails,
  Settlement,
} from "../billing/index.ts";
import {
  type CatalogModel,
  type EndpointKind,
  isModelAllowed,
  type ResolvedRoute,
} from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { Usage } from "../spec/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { ErrorDialect } from "./error-renderer.ts";
import { SANDBOX_HEADER, vendorNotConfigured } from "./model-availability.ts";
import { modelNotFound } from "./model-not-found.ts";
import { registerRouteDoc } from "./openapi.ts";
import { holdRequest, type OutputCapControl } from "./output-cap.ts";
import type { Services } from "./services.ts";
import type { SseFrame } from "./sse.ts";
import { compileValidator } from "./validate.ts";
import { writeLongResult } from "./write-result.ts";

export interface OperationContext {
  requestId: string;
  accountId: string;
  key: ApiKeyRecord;
  model: CatalogModel;
  services: Services;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Request headers, lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /** Charges the actual usage now (idempotent); streams call it before their final frame. */
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  /** Told of each route whose upstream was called; a sandbox route marks the response. */
  routeCalled(route: ResolvedRoute): void;
}

export type OperationResult =
  | { kind: "json"; status?: number; body: unknown; usage: Usage; headers?: Record<string, string> }
  /** Work taken on for later (a video task): it owns its hold and its settlement. */
  | { kind: "accepted"; status: number; body: unknown; headers?: Record<string, string> }
  | {
      kind: "stream";
      frames: AsyncIterable<SseFrame>;
      /**
       * Usage delivered so far, read when the stream ends, is aborted or breaks (the larger of
       * the upstream's report and the gateway's own count of what it delivered), and for
       * checkpoints; `undefined` when the upstream failed before delivering anything, which is
       * charged nothing.
       */
      usage(): Promise<Usage | undefined>;
      /** True when the upstream broke mid-way (what was delivered is billed as `interrupted`). */
      interrupted?(): boolean;
      headers?: Record<string, string>;
    }
  | {
      /** Raw bytes (audio) written as they come; `usage` as for streams. */
      kind: "binary";
      contentType: string;
      body: AsyncIterable<Uint8Array>;
      usage(): Promise<Usage | undefined>;
      interrupted?(): boolean;
      headers?: Record<string, string>;
    };

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
  /** Media type of a non-JSON success body (e.g. `audio/mpeg`), for the OpenAPI document. */
  responseContentType?: string;
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

/** What `/v1/billing/quote` needs of each model endpoint, by catalog endpoint kind. */
export interface QuoteTarget {
  path: string;
  validate(body: unknown): unknown;
  estimateCost?(body: unknown, model: CatalogModel): Promise<PricedUsage>;
}

declare module "fastify" {
  interface FastifyRequest {
    dialect?: ErrorDialect;
  }
  interface FastifyInstance {
    quoteTargets: Map<EndpointKind, QuoteTarget>;
  }
}

function dialectFor<S extends TSchema>(
  endpoint: ModelEndpoint<S>,
  model: CatalogModel | undefined,
): ErrorDialect {
  return typeof endpoint.dialect === "function" ? endpoint.dialect(model) : endpoint.dialect;
}

export function registerModelEndpoint<S extends TSchema>(
  app: FastifyInstance,
  services: Services,
  endpoint: ModelEndpoint<S>,
): void {
  const validate = compileValidator(endpoint.body, { nullMeansAbsent: endpoint.nullMeansAbsent });
  if (!app.hasDecorator("quoteTargets")) app.decorate("quoteTargets", new Map());
  // The first endpoint registered for a kind answers its quotes (chat completions for chat).
  for (const kind of endpoint.kinds.filter((kind) => !app.quoteTargets.has(kind))) {
    app.quoteTargets.set(kind, {
      path: endpoint.path,
      validate,
      estimateCost: endpoint.estimateCost as QuoteTarget["estimateCost"],
    });
  }
  registerRouteDoc(app, {
    method: endpoint.method,
    path: endpoint.path,
    summary: endpoint.summary,
    tags: endpoint.tags,
    body: endpoint.body,
    bodyContentType: endpoint.bodyContentType,
    response: endpoint.response,
    responseContentType: endpoint.responseContentType,
  });

  // Authenticate before the body is read: an anonymous client gets its 401 without the
  // gateway buffering (or parsing) a body for it.
  const callers = new WeakMap<FastifyRequest, Caller & { key: ApiKeyRecord }>();
  app.route({
    method: endpoint.method,
    url: endpoint.path,
    config: { dialect: dialectFor(endpoint, undefined) },
    // A callback hook with a synchronous path for keys in the cache (the usual case).
    onRequest: (request, _reply, done) => {
      try {
        const token = readBearer(request.headers);
        const cached = services.authenticator.cachedKey(token);
        if (cached) {
          callers.set(request, cached);
          done();
          return;
        }
        services.authenticator.authenticateKey(token).then((caller) => {
          callers.set(request, caller);
          done();
        }, done);
      } catch (error) {
        done(error as Error);
      }
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const started = performance.now();
      const raw = request.body as { model?: unknown } | undefined;
      const modelId = typeof raw?.model === "string" ? raw.model : undefined;
      const caller =
        callers.get(request) ??
        (await services.authenticator.authenticateKey(readBearer(request.headers)));
      const catalogModel =
        modelId === undefined
          ? undefined
          : services.catalog.resolve(modelId, caller.key.modelAliases);
      request.dialect = dialectFor(endpoint, catalogModel);
      if (modelId === undefined) {
        if (raw !== undefined && raw !== null && typeof raw === "object" && "model" in raw) {
          throw new GatewayError(
            "invalid_parameter",
            { detail: "Invalid 'model': expected string." },
            { param: "model" },
          );
        }
        throw new GatewayError("missing_parameter", { param: "model" }, { param: "model" });
      }
      if (!catalogModel) {
        throw modelNotFound(services.catalog, {
          requested: modelId,
          allowlist: caller.key.models,
          kinds: endpoint.kinds,
          ...(endpoint.unknownModel === "endpoint_model_mismatch"
            ? { mismatchOn: endpoint.path }
            : {}),
        });
      }
      if (!endpoint.kinds.includes(catalogModel.endpoint)) {
        throw new GatewayError(
          "endpoint_model_mismatch",
          { model: catalogModel.id, actual: catalogModel.endpoint, path: endpoint.path },
          { param: "model" },
        );
      }
      if (!isModelAllowed(caller.key.models, catalogModel.id)) {
        throw new GatewayError("model_not_allowed", { model: catalogModel.id }, { param: "model" });
      }
      const unconfigured = vendorNotConfigured(catalogModel);
      if (unconfigured) throw unconfigured;
      const validated = validate(raw);
      endpoint.validateForModel?.(validated, catalogModel);

      const lease = await services.quotas.acquire(caller.key, request.id);
      let reservation: Reservation | undefined;
      const abort = new AbortController();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      let settlement: Settlement | undefined;
      let upstreamAnsweredAt: number | undefined;
      const settle = async (usage: Usage, details: SettleDetails = {}) => {
        settlement = await reservation!.settle(usage, {
          ttfbMs: (upstreamAnsweredAt ?? performance.now()) - started,
          ...details,
          status: details.status ?? (abort.signal.aborted ? "aborted" : "succeeded"),
        });
        return settlement;
      };
      try {
        let body = validated;
        if (!endpoint.holdsItself) {
          const held = await holdRequest(services, endpoint, validated, catalogModel, {
            requestId: request.id,
            accountId: caller.accountId,
            keyId: caller.key.id,
            model: catalogModel,
            endpoint: endpoint.path,
          });
          reservation = held.reservation;
          body = held.body;
          if (held.loweredTo !== undefined)
            reply.header("x-switchyard-output-cap-lowered", String(held.loweredTo));
        }
        const result = await endpoint.run(body, {
          requestId: request.id,
          accountId: caller.accountId,
          key: caller.key,
          model: catalogModel,
          services,
          signal: abort.signal,
          headers: request.headers,
          settle,
          routeCalled: (route) => {
            if (route.sandbox) reply.header(SANDBOX_HEADER, "true");
          },
        });
        upstreamAnsweredAt = performance.now();
        const ttfbMs = upstreamAnsweredAt - started;
        if (result.kind === "accepted") {
          reply.headers({ ...lease.headers, ...result.headers }).code(result.status);
          finish(request, services, {
            model: catalogModel,
            status: result.status,
            started,
            ttfbMs,
            costMicros: 0,
          });
          lease.release();
          return reply.send(result.body);
        }
        if (result.kind === "json") {
          const { costMicros } = await settle(result.usage);
          reply
            .headers({
              ...lease.headers,
              ...result.headers,
              "x-switchyard-cost-micros": String(costMicros),
            })
            .code(result.status ?? 200);
          finish(request, services, {
            model: catalogModel,
            status: result.status ?? 200,
            started,
            ttfbMs,
            costMicros,
          });
          lease.release();
          return reply.send(result.body);
        }
        await writeLongResult(request, reply, result, {
          lease,
          abort,
          settle,
          release: (reason) => reservation!.release(reason),
          checkpoint: (usage) => reservation!.checkpoint(usage),
          beginDelivery: () => reservation!.beginDelivery(),
          settled: () => settlement !== undefined,
          checkpointMs: services.config.billing.checkpoint_seconds * 1000,
          heartbeatMs: services.config.server.sse_heartbeat_ms,
        });
        finish(request, services, {
          model: catalogModel,
          status: 200,
          started,
          ttfbMs,
          costMicros: settlement?.costMicros ?? 0,
          aborted: abort.signal.aborted,
        });
        return reply;
      } catch (error) {
        lease.release();
        if (settlement === undefined) await reservation?.release("request failed");
        throw error;
      }
    },
  });
}

function finish(
  request: FastifyRequest,
  services: Services,
  entry: {
    model: CatalogModel;
    status: number;
    started: number;
    ttfbMs: number;
    costMicros: number;
    aborted?: boolean;
  },
): void {
  services.logger.info(
    {
      requestId: request.id,
      model: entry.model.id,
      path: request.url,
      status: entry.status,
      latencyMs: Math.round(performance.now() - entry.started),
      ttfbMs: Math.round(entry.ttfbMs),
      costMicros: entry.costMicros,
      ...(entry.aborted ? { aborted: true } : {}),
    },
    "request completed",
  );
}
