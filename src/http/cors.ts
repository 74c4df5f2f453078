/**
 * @module http/cors
 * Browser access (CORS) for the origins in `server.cors_origins`, through `@fastify/cors`: a
 * preflight from an allowed origin is answered before authentication (browsers send it without
 * credentials), every answer to an allowed origin names it, and the headers a client reads —
 * the request id, the cost, the rate limits, `Retry-After`, `Idempotent-Replayed` — are exposed. Other origins get no
 * CORS headers, so the browser keeps their scripts out.
 */
import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

/** Response headers a browser client may read. */
const EXPOSED = [
  "x-request-id",
  "x-switchyard-cost-micros",
  "x-switchyard-warnings",
  "x-switchyard-sandbox",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-tokens",
  "x-ratelimit-limit-concurrency",
  "retry-after",
  "mcp-session-id",
  "idempotent-replayed",
];

export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  void app.register(cors, {
    origin: (origin, callback) =>
      callback(null, any || (origin !== undefined && allowed.has(origin))),
    methods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
    exposedHeaders: EXPOSED,
    maxAge: 600,
    strictPreflight: false,
  });
}
