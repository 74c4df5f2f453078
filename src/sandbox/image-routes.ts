/**
 * @module sandbox/image-routes
 * The sandbox's image APIs in one registration: the result host (`/__results/…`, shared by
 * DashScope's and OpenAI's image links) and OpenAI's Images API. DashScope's Qwen-Image is served
 * by the shared multimodal-generation route (`dashscope-image.ts`).
 */
import type { FastifyInstance } from "fastify";
import { registerImageResultRoutes } from "./image-results.ts";
import { registerOpenAIImageRoutes } from "./openai-images.ts";
import type { SandboxState } from "./state.ts";

export function registerImageRoutes(app: FastifyInstance, state: SandboxState): void {
  registerImageResultRoutes(app, state.links);
  registerOpenAIImageRoutes(app, state);
}
