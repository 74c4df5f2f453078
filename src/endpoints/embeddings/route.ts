/**
 * @module endpoints/embeddings/route
 * `POST /v1/embeddings` (registered by `registerEmbeddingRoutes`).
 */
import type { FastifyInstance } from "fastify";
import type { Services } from "../../http/services.ts";

export function registerEmbeddingRoutes(_app: FastifyInstance, _services: Services): void {}
