/**
 * @module sandbox/admin-routes
 * The sandbox's own endpoints under `/__sandbox/`: exchange counters, the log of received
 * requests, a reset for test isolation, and the result hosts' test clock (moved forward to see
 * links expire, like a payment provider's test clock).
 */
import type { FastifyInstance } from "fastify";
import { openAIError } from "./openai-errors.ts";
import { MAX_CLOCK_ADVANCE_SECONDS } from "./signed-links.ts";
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

  app.post("/__sandbox/clock", async (request, reply) => {
    const body = request.body as { advance_seconds?: unknown } | null;
    const seconds = body?.advance_seconds;
    if (
      typeof seconds !== "number" ||
      !Number.isInteger(seconds) ||
      seconds < 0 ||
      seconds > MAX_CLOCK_ADVANCE_SECONDS
    ) {
      const message = `Invalid 'advance_seconds': expected an integer 0-${MAX_CLOCK_ADVANCE_SECONDS}.`;
      return reply
        .code(400)
        .send(openAIError(message, "invalid_request_error", "advance_seconds", "invalid_value"));
    }
    const advanced = state.links.advance(seconds);
    return { advanced_seconds: advanced, now: state.links.nowSeconds() };
  });
}
