/**
 * @module sandbox/embeddings
 * Embedding APIs of the sandbox (OpenAI-compatible, Voyage, Gemini).
 */
import type { FastifyInstance } from "fastify";
import type { SandboxState } from "./state.ts";

export function registerEmbeddingRoutes(_app: FastifyInstance, _state: SandboxState): void {}
