/**
 * @module endpoints/system/routes
 * Health (`/healthz`: the process is up), readiness (`/readyz`: the database answers and the
 * gateway is not draining) and the OpenAPI document.
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../errors/index.ts";
import { buildOpenApiDocument } from "../../http/openapi.ts";
import { registerRoute } from "../../http/route.ts";
import type { Services } from "../../http/services.ts";

export interface Lifecycle {
  draining: boolean;
}

export function registerSystemRoutes(
  app: FastifyInstance,
  services: Services,
  lifecycle: Lifecycle,
): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/healthz",
    summary: "Liveness: the process answers.",
    tags: ["system"],
    auth: "none",
    async handler() {
      return { status: "ok" };
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/readyz",
    summary: "Readiness: the database answers and the gateway is not shutting down.",
    tags: ["system"],
    auth: "none",
    async handler() {
      if (lifecycle.draining) throw new GatewayError("shutting_down");
      await services.store.countAccounts();
      return { status: "ready", models: services.catalog.list().length };
    },
  });

  let document: Record<string, unknown> | undefined;
  registerRoute(app, services, {
    method: "GET",
    path: "/openapi.json",
    summary: "This API's OpenAPI 3.1 document.",
    tags: ["system"],
    auth: "none",
    async handler() {
      document ??= buildOpenApiDocument(app.routeDocs, services.config.server.public_url);
      return document;
    },
  });
}
