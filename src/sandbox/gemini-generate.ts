/**
 * @module sandbox/gemini-generate
 * The Gemini `generateContent` / `streamGenerateContent` emulation under `/gemini/v1beta`.
 */
import type { FastifyInstance } from "fastify";
import type { SandboxState } from "./state.ts";

export function registerGeminiRoutes(_app: FastifyInstance, _state: SandboxState): void {}
