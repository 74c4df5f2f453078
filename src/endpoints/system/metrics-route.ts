/**
 * @module endpoints/system/metrics-route
 * `GET /metrics`: the Prometheus exposition on the gateway's own port, for an admin account's key
 * or the configured scrape token (`metrics.token`, `SWITCHYARD_METRICS_TOKEN`), never for anyone
 * else (401 without credentials, 403 for a key that is not an admin's). Not in the OpenAPI
 * document: it is a scrape target, not part of the API. A token-free listener on a separate
 * address is `metrics.listen` (telemetry/metrics-listener.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { hasAdminPowers, readBearer } from "../../auth/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";

/** `admin_required` as it is true for `/metrics`, which takes no login session. */
const SCRAPE_ONLY =
  "/metrics needs an admin account's own key (not a key minted by a key) or the scrape token (metrics.token), as Authorization: Bearer.";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** True when the request bears the scrape token (compared in constant time). */
function bearsToken(request: FastifyRequest, token: string | undefined): boolean {
  const presented = readBearer(request.headers);
  if (!token || !presented) return false;
  return timingSafeEqual(digest(presented), digest(token));
}

export function registerMetricsRoute(
  app: FastifyInstance,
  services: Services,
  metrics: NonNullable<Services["metrics"]>,
): void {
  app.route({
    method: "GET",
    url: "/metrics",
    config: { dialect: "gateway" },
    onRequest: async (request) => {
      if (bearsToken(request, services.config.metrics.token)) return;
      // A key, not a login session: a scrape target is not one of the session's routes.
      const caller = await services.authenticator.authenticateKey(readBearer(request.headers));
      if (!hasAdminPowers(caller))
        throw new GatewayError("admin_required", {}, { message: SCRAPE_ONLY });
    },
    handler: async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply
        .header("content-type", contentType)
        .header("cache-control", "no-store")
        .send(body);
    },
  });
}
