/**
 * @module sandbox/speech
 * The DashScope text-to-speech API of the sandbox: the shared multimodal-generation route
 * (`dashscope-multimodal.ts`, which hands `qwen3-tts*` models to `speech-handler.ts`) and the
 * result host that serves the WAV files its answers link to (`speech-results.ts`).
 */
import type { FastifyInstance } from "fastify";
import { registerMultimodalGeneration } from "./dashscope-multimodal.ts";
import { registerResultHost, resultStoreFor } from "./speech-results.ts";
import type { SandboxState } from "./state.ts";

export function registerSpeechRoutes(app: FastifyInstance, state: SandboxState): void {
  registerMultimodalGeneration(app, state);
  registerResultHost(app, resultStoreFor(state));
}
