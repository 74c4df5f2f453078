/**
 * @module sandbox/speech
 * The DashScope text-to-speech API of the sandbox.
 */
import type { FastifyInstance } from "fastify";
import type { SandboxState } from "./state.ts";

export function registerSpeechRoutes(_app: FastifyInstance, _state: SandboxState): void {}
