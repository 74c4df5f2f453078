/**
 * @module http/model-endpoint
 * The HTTP transport of the model pipeline: authenticates before the body is read, picks the
 * error dialect, hands the request to the core (`core/model-call`) and writes its answer — JSON
 * with the shared answer headers, or a long result through the SSE/bytes sink. Everything in
 * between (model checks, validation, quotas, holds, settlement) is the core's.
 */
import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Caller, readBearer } from "../auth/index.ts";
import { CallAbort } from "../core/call-abort.ts";
import type { ModelEndpointSet } from "../core/model-endpoints.ts";
import { dialectFor, type ErrorDialect, type ModelEndpoint } from "../core/operation.ts";
import type { Services } from "../core/services.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import { registerRouteDoc } from "./openapi.ts";
import { answerHeaders, SANDBOX_HEADER } from "./response-headers.ts";
import { httpDeliverySink } from "./write-result.ts";

declare module "fastify" {
  interface FastifyRequest {
    dialect?: ErrorDialect;
  }
  interface FastifyInstance {
    modelEndpoints: ModelEndpointSet;
  }
}

export function registerModelEndpoint<S extends TSchema>(
  app: FastifyInstance,
  services: Services,
  endpoint: ModelEndpoint<S>,
): void {
  const prepared = app.modelEndpoints.add(endpoint);
  registerRouteDoc(app, {
    method: endpoint.method,
    path: endpoint.path,
    summary: endpoint.summary,
    tags: endpoint.tags,
    body: endpoint.body,
    bodyContentType: endpoint.bodyContentType,
    response: endpoint.response,
    responseContentType: endpoint.responseContentType,
    successStatus: endpoint.successStatus,
    streams: endpoint.streams,
    // Money (402), an unknown model (404), quotas (429), the upstream (502–504).
    errorStatuses: [402, 404, 429, 502, 503, 504],
  });

  // Authenticate before the body is read: an anonymous client gets its 401 without the
  // gateway buffering (or parsing) a body for it.
  const callers = new WeakMap<FastifyRequest, Caller & { key: ApiKeyRecord }>();
  app.route({
    method: endpoint.method,
    url: endpoint.path,
    config: { dialect: dialectFor(endpoint, undefined), modelEndpoint: true },
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
      const caller =
        callers.get(request) ??
        (await services.authenticator.authenticateKey(readBearer(request.headers)));
      const asked = request.body as { model?: unknown; stream?: unknown } | undefined;
      const wanted = request.modelFacts !== undefined || typeof endpoint.dialect === "function";
      const model =
        wanted && typeof asked?.model === "string"
          ? services.catalog.resolve(asked.model, caller.key.modelAliases)
          : undefined;
      if (request.modelFacts)
        request.modelFacts = { id: model?.id, stream: asked?.stream === true };
      if (typeof endpoint.dialect === "function") request.dialect = endpoint.dialect(model);
      // The request's abort: a small object of the gateway's own, not an AbortController
      // (core/call-abort.ts says why).
      const abort = new CallAbort();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      const outcome = await prepared.call({
        caller,
        body: request.body,
        requestId: request.id,
        signal: abort,
        headers: request.headers,
        started,
        via: "http",
        clientRequestId: request.clientRequestId,
        trace: request.trace,
        onSandboxRoute: () => reply.header(SANDBOX_HEADER, "true"),
      });
      if (request.modelFacts)
        request.modelFacts = { id: outcome.model.id, stream: outcome.kind === "long" };
      if (outcome.kind !== "long") {
        const charged = outcome.kind === "json" ? outcome.costMicros : undefined;
        return reply
          .headers(answerHeaders(outcome, charged))
          .code(outcome.status)
          .send(outcome.body);
      }
      await outcome.deliver(
        httpDeliverySink(reply, answerHeaders(outcome), {
          heartbeatMs: services.config.server.sse_heartbeat_ms,
          dialect: request.dialect ?? dialectFor(endpoint, model),
          requestId: request.id,
        }),
      );
      return reply;
    },
  });
}
