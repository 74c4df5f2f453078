/**
 * @module app
 * `buildApp(services)`: the HTTP server with every route of the gateway, listed on one screen.
 * Tests call it with their own services; `main.ts` with the real ones.
 */
import type { FastifyInstance } from "fastify";
import { createModelCallRunner } from "./core/model-call-runner.ts";
import { createModelEndpointSet } from "./core/model-endpoints.ts";
import type { Services } from "./core/services.ts";
import { registerAccountRoutes } from "./endpoints/account/routes.ts";
import { registerRouteHealthRoutes } from "./endpoints/admin/route-health.ts";
import { registerAdminRoutes } from "./endpoints/admin/routes.ts";
import { registerBillingRoutes } from "./endpoints/billing/routes.ts";
import { chatCompletionsEndpoint } from "./endpoints/chat-completions/route.ts";
import { registerCreditCodeRoutes } from "./endpoints/credit-codes/routes.ts";
import { registerEmbeddingRoutes } from "./endpoints/embeddings/route.ts";
import { imageGenerationsEndpoint, registerImageEditRoutes } from "./endpoints/images/routes.ts";
import { messagesEndpoint, registerCountTokensRoute } from "./endpoints/messages/route.ts";
import { registerModelRoutes } from "./endpoints/models/route.ts";
import { registerResponsesRoutes } from "./endpoints/responses/route.ts";
import { registerSpeechRoutes } from "./endpoints/speech/route.ts";
import { registerMetricsRoute } from "./endpoints/system/metrics-route.ts";
import { type Lifecycle, registerSystemRoutes } from "./endpoints/system/routes.ts";
import { registerVideoRoutes } from "./endpoints/videos/routes.ts";
import { registerConsole } from "./http/console.ts";
import { registerCors } from "./http/cors.ts";
import { registerHttpMetrics } from "./http/http-metrics.ts";
import { registerModelEndpoint } from "./http/model-endpoint.ts";
import { createHttpServer } from "./http/server.ts";
import { registerTracing } from "./http/tracing.ts";
import { registerMcpRoutes } from "./mcp/routes.ts";

export function buildApp(
  services: Services,
  lifecycle: Lifecycle = { draining: false },
): FastifyInstance {
  const server = services.config.server;
  const app = createHttpServer({
    logger: services.logger,
    bodyLimitBytes: server.body_limit_bytes,
    maxJsonDepth: server.max_json_depth,
    maxJsonValues: server.max_json_values,
    headersTimeoutMs: server.headers_timeout_ms,
    requestTimeoutMs: server.request_timeout_ms,
    keepAliveTimeoutMs: server.keep_alive_timeout_ms,
    trustProxy: server.trust_proxy,
  });
  if (services.metrics) registerHttpMetrics(app, services.metrics);
  if (services.tracer) registerTracing(app, services.tracer);
  if (server.cors_origins.length > 0) registerCors(app, server.cors_origins);
  app.decorate("routeDocs", []);
  app.decorate("modelEndpoints", createModelEndpointSet(services));

  // System
  registerSystemRoutes(app, services, lifecycle);
  if (services.metrics && services.config.metrics.enabled)
    registerMetricsRoute(app, services, services.metrics);

  // Model APIs
  registerModelEndpoint(app, services, chatCompletionsEndpoint);
  registerModelEndpoint(app, services, messagesEndpoint);
  registerCountTokensRoute(app, services);
  registerResponsesRoutes(app, services);
  registerEmbeddingRoutes(app, services);
  registerSpeechRoutes(app, services);
  registerModelEndpoint(app, services, imageGenerationsEndpoint);
  registerImageEditRoutes(app, services);
  registerVideoRoutes(app, services);
  registerModelRoutes(app, services);

  // The same capabilities as MCP tools, through the same core
  registerMcpRoutes(app, services, {
    runner: createModelCallRunner(app.modelEndpoints),
    endpoints: app.modelEndpoints,
  });

  // Accounts and operators
  registerAccountRoutes(app, services);
  registerBillingRoutes(app, services);
  registerAdminRoutes(app, services);
  registerCreditCodeRoutes(app, services);
  registerRouteHealthRoutes(app, services);

  // The web console (static files over the public APIs)
  registerConsole(app, { enabled: services.config.console.enabled });

  return app;
}
