/**
 * @module http/http-metrics
 * Feeds the HTTP metrics: one hook per request notes its route template at arrival (in-flight
 * gauge) and reports it when the response closes — finished, or cut short by the client, which
 * also covers streams the transport took over (`reply.hijack()`), where Fastify's `onResponse`
 * does not run for a client that left. A request whose client left before any header was sent is
 * reported with status 499 (nginx's "client closed request"). On model endpoints the handler
 * names the catalog model and whether the answer streams (`request.modelFacts`), for
 * `switchyard_requests_total`; the error handler names the error code (`request.errorCode`).
 */
import type { FastifyInstance } from "fastify";
import type { GatewayMetrics } from "../telemetry/index.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Set on model endpoints: the catalog model asked for (undefined: unknown) and `stream`. */
    modelFacts?: { id: string | undefined; stream: boolean };
  }
  interface FastifyContextConfig {
    /** The route is a model endpoint (counted in `switchyard_requests_total`). */
    modelEndpoint?: boolean;
  }
}

/** Status reported for a request whose client went away before the answer started. */
export const CLIENT_CLOSED_STATUS = 499;

export function registerHttpMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook("onRequest", (request, reply, done) => {
    const started = performance.now();
    // Fastify builds a new object on every read of `routeOptions`: read it once.
    const { url: route, config } = request.routeOptions;
    metrics.httpRequestStarted(route);
    if (config?.modelEndpoint) request.modelFacts = { id: undefined, stream: false };
    reply.raw.once("close", () => {
      metrics.httpRequestFinished({
        method: request.method,
        route,
        status: reply.raw.headersSent ? reply.raw.statusCode : CLIENT_CLOSED_STATUS,
        seconds: (performance.now() - started) / 1000,
        ...(request.errorCode ? { errorCode: request.errorCode } : {}),
        ...(request.modelFacts ? { model: request.modelFacts } : {}),
      });
    });
    done();
  });
}
