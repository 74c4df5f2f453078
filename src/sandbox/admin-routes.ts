/**
 * @module sandbox/admin-routes
 * The sandbox's own observability endpoints under `/__sandbox/`: exchange counters, the log of
 * received requests, and a reset for test isolation.
 */
import type { FastifyInstance } from "fastify";
import { openAIError } from "./openai-errors.ts";
import { REQUEST_LOG_CAPACITY, type SandboxState } from "./state.ts";

export const ADMIN_PREFIX = "/__sandbox/";

export function registerAdminRoutes(app: FastifyInstance, state: SandboxState): void {
  app.get("/__sandbox/stats", async () => state.stats());

  app.get<{ Querystring: { limit?: string } }>("/__sandbox/requests", async (request, reply) => {
    const raw = request.query.limit;
    const limit = raw === undefined ? REQUEST_LOG_CAPACITY : Number(raw);
    if (!Number.isInteger(limit) || limit < 0) {
      const message = `Invalid 'limit': expected a non-negative integer, got '${raw}'.`;
      return reply
        .code(400)
        .send(openAIError(message, "invalid_request_error", "limit", "invalid_value"));
    }
    return { requests: state.recent(limit) };
  });

  app.post("/__sandbox/reset", async () => {
    state.reset();
    return { reset: true };
  });
}
