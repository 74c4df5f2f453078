/**
 * @module endpoints/admin/route-health
 * Upstream health for operators (admin keys only): `GET /v1/admin/routes` lists every model's
 * routes with their circuit breaker (state, consecutive failures, the last failure, when it
 * opened and when it lets its next probe through), paged by model id; `POST
 * /v1/admin/routes/reset` closes one route's breaker, or every breaker, by hand. The state is
 * this instance's (each gateway process keeps its own; see docs/upstream-health.md).
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { CatalogModel } from "../../catalog/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerRoute } from "../../http/route.ts";
import {
  ALWAYS_HEALTHY,
  catalogRoutes,
  type RouteHealthView,
  routeId,
} from "../../routing/index.ts";
import { decodeCursor, pageOf } from "../../store/cursor.ts";

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

function describeHealth(view: RouteHealthView) {
  const failure = view.lastFailure;
  return {
    state: view.state,
    consecutive_failures: view.consecutiveFailures,
    last_failure: failure
      ? {
          at: iso(failure.at),
          kind: failure.kind,
          status: failure.status ?? null,
          message: failure.message,
        }
      : null,
    opened_at: iso(view.openedAt),
    retry_at: iso(view.retryAt),
    probing: view.probing,
  };
}

function describeModel(model: CatalogModel, services: Services) {
  const health = services.routeHealth ?? ALWAYS_HEALTHY;
  return {
    object: "model_routes",
    model: model.id,
    route_strategy: model.route_strategy ?? "fallback",
    routes: model.resolvedRoutes.map((route) => ({
      id: routeId(route),
      vendor: route.vendor,
      upstream_model: route.upstreamModel,
      sandbox: route.sandbox,
      ...describeHealth(health.view(route)),
    })),
  };
}

export function registerRouteHealthRoutes(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/admin/routes",
    summary:
      "List every model's upstream routes with their circuit breaker state (this instance's).",
    tags: ["admin"],
    auth: "admin",
    query: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
      cursor: Type.Optional(Type.String({ maxLength: 2048 })),
      state: Type.Optional(
        Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("half_open")], {
          description: "Only models with at least one route in this state.",
        }),
      ),
    }),
    async handler({ query }) {
      const limit = Number(query.limit ?? 100);
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ["string"]);
      const health = services.routeHealth ?? ALWAYS_HEALTHY;
      const models = [...services.catalog.list()]
        .filter((model) => model.resolvedRoutes.length > 0)
        .filter((model) => after === undefined || model.id > String(after[0]))
        .filter(
          (model) =>
            query.state === undefined ||
            model.resolvedRoutes.some((route) => health.view(route).state === query.state),
        )
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit + 1);
      return pageOf(
        models,
        limit,
        (model) => [model.id],
        (model) => describeModel(model, services),
      );
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/admin/routes/reset",
    summary: "Close a route's circuit breaker by hand (`route`: its id), or every breaker.",
    tags: ["admin"],
    auth: "admin",
    body: Type.Optional(
      Type.Object(
        {
          route: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 2048,
              description: "A route id from `GET /v1/admin/routes`; absent: every route.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    async handler({ body }) {
      const id = body?.route;
      if (id !== undefined) {
        const known = [...catalogRoutes(services.catalog.list())].some(
          (route) => routeId(route) === id,
        );
        if (!known)
          throw new GatewayError(
            "invalid_parameter",
            { detail: `No route has the id '${id}'; see GET /v1/admin/routes.` },
            { param: "route" },
          );
      }
      const reset = (services.routeHealth ?? ALWAYS_HEALTHY).reset(id);
      return { object: "routes_reset", route: id ?? null, reset };
    },
  });
}
