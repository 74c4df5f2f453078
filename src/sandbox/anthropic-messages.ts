/**
 * @module sandbox/anthropic-messages
 * The Anthropic Messages API emulation (`/anthropic/v1/messages`, `/anthropic/v1/messages/count_tokens`).
 */
import type { FastifyInstance } from "fastify";
import type { SandboxState } from "./state.ts";

export function registerAnthropicRoutes(_app: FastifyInstance, _state: SandboxState): void {}
