/**
 * @module endpoints/speech/route
 * `POST /v1/audio/speech` (registered by `registerSpeechRoutes`).
 */
import type { FastifyInstance } from "fastify";
import type { Services } from "../../http/services.ts";

export function registerSpeechRoutes(_app: FastifyInstance, _services: Services): void {}
