/**
 * @module http/tracing
 * The SERVER span of every HTTP request, when the gateway traces (`services.tracer`): opened as
 * the request arrives (the child of the client's `traceparent`, when valid), named after the
 * method and route template, and ended when the response closes — finished, or cut short by the
 * client, which also covers streams the transport took over (`reply.hijack()`), where Fastify's
 * own `onSend`/`onResponse` hooks do not run. Model endpoints hand `request.trace` to the
 * pipeline, which adds the model, the caller's ids, tokens and cost, and the attempt spans.
 * Registered only with a tracer: without one, no hook runs.
 */
import type { FastifyInstance } from "fastify";
import { type GatewayTracer, type RequestTrace, startRequestTrace } from "../telemetry/index.ts";
import { CLIENT_CLOSED_STATUS } from "./http-metrics.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's trace, when the gateway traces. */
    trace?: RequestTrace;
  }
}

export function registerTracing(app: FastifyInstance, tracer: GatewayTracer): void {
  app.addHook("onRequest", (request, reply, done) => {
    const trace = startRequestTrace(tracer, {
      method: request.method,
      route: request.routeOptions.url,
      scheme: request.protocol,
      headers: request.headers,
    });
    trace.span.setAttribute("switchyard.request_id", request.id);
    request.trace = trace;
    reply.raw.once("close", () => {
      trace.end(
        reply.raw.headersSent ? reply.raw.statusCode : CLIENT_CLOSED_STATUS,
        request.errorCode,
      );
    });
    done();
  });
}
