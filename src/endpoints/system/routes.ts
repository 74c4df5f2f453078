/**
 * @module endpoints/system/routes
 * Health (`/healthz`: the process is up), readiness (`/readyz`: the database answers and the
 * gateway is not draining) and the OpenAPI document, each at the root and under `/v1` (spec 9:
 * every path carries the prefix; probes and tools that expect the root keep working).
 */
import type { FastifyInstance } from "fastify";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { buildOpenApiDocument } from "../../http/openapi.ts";
import { registerRoute } from "../../http/route.ts";

export interface Lifecycle {
  draining: boolean;
}

export function registerSystemRoutes(
  app: FastifyInstance,
  services: Services,
  lifecycle: Lifecycle,
): void {
  // Built on first request, once every route has registered its schemas.
  let document: Record<string, unknown> | undefined;
  const openApi = () =>
    (document ??= buildOpenApiDocument(app.routeDocs, services.config.server.public_url));
  for (const prefix of ["", "/v1"])
    registerSystemRoutesAt(app, services, { lifecycle, openApi, prefix });
}

function registerSystemRoutesAt(
  app: FastifyInstance,
  services: Services,
  {
    lifecycle,
    openApi,
    prefix,
  }: {
    lifecycle: Lifecycle;
    openApi: () => Record<string, unknown>;
    prefix: string;
  },
): void {
  registerRoute(app, services, {
    method: "GET",
    path: `${prefix}/healthz`,
    summary: "Liveness: the process answers.",
    tags: ["system"],
    auth: "none",
    async handler() {
      return { status: "ok" };
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: `${prefix}/readyz`,
    summary: "Readiness: the database answers and the gateway is not shutting down.",
    tags: ["system"],
    auth: "none",
    async handler() {
      if (lifecycle.draining) throw new GatewayError("shutting_down");
      await services.store.countAccounts();
      return { status: "ready", models: services.catalog.list().length };
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: `${prefix}/openapi.json`,
    summary: "This API's OpenAPI 3.1 document.",
    tags: ["system"],
    auth: "none",
    async handler() {
      return openApi();
    },
  });
}
