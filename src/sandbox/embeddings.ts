/**
 * @module sandbox/embeddings
 * Embedding APIs of the sandbox (OpenAI-compatible, Voyage, Gemini). Voyage has its own route
 * here; the OpenAI-compatible `…/embeddings` paths are dispatched by the server's catch-all
 * (next to chat completions) and Gemini's `:embedContent` / `:batchEmbedContents` by
 * `gemini-generate.ts`. All three answer deterministic unit-length vectors (`embed-vectors.ts`)
 * and honour the fault language (`request-faults.ts`).
 */
import type { FastifyInstance } from "fastify";
import { registerVoyageRoutes } from "./embed-voyage.ts";
import type { SandboxState } from "./state.ts";

export { handleOpenAIEmbeddings, isEmbeddingsPath } from "./embed-openai.ts";
export { handleGeminiEmbed } from "./gemini-embed.ts";

export function registerEmbeddingRoutes(app: FastifyInstance, state: SandboxState): void {
  registerVoyageRoutes(app, state);
}
