/**
 * @module sandbox/video/video-routes
 * The sandbox's video emulations in one registration: DashScope's Wan task API
 * (`wan-routes.ts`), xAI's deferred video API (`xai-routes.ts`) and the result host their links
 * point to (`video-results.ts`). How long a task runs is `SANDBOX_VIDEO_SECONDS` (seconds,
 * default {@link DEFAULT_VIDEO_SECONDS}), or per request the `video-seconds` fault.
 */
import type { FastifyInstance } from "fastify";
import { MAX_VIDEO_SECONDS } from "../faults.ts";
import type { SandboxState } from "../state.ts";
import { registerVideoResultRoutes } from "./video-results.ts";
import { registerWanRoutes } from "./wan-routes.ts";
import { registerXaiVideoRoutes } from "./xai-routes.ts";

/** A task's whole run by default: short, so a first try shows every state at once. */
export const DEFAULT_VIDEO_SECONDS = 2.5;
export const VIDEO_SECONDS_ENV = "SANDBOX_VIDEO_SECONDS";

export interface VideoRouteOptions {
  /** Seconds from submission to the end of a task (PENDING, then RUNNING). */
  lifecycleSeconds?: number;
}

/** The run length `SANDBOX_VIDEO_SECONDS` asks for; a value that is no number 0–3600 throws. */
export function lifecycleSecondsFromEnv(
  value: string | undefined = process.env[VIDEO_SECONDS_ENV],
) {
  if (value === undefined || value.trim() === "") return DEFAULT_VIDEO_SECONDS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_VIDEO_SECONDS) {
    throw new Error(
      `${VIDEO_SECONDS_ENV} must be a number of seconds 0-${MAX_VIDEO_SECONDS}, got '${value}'`,
    );
  }
  return seconds;
}

export function registerVideoRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: VideoRouteOptions = {},
): void {
  const lifecycleSeconds = options.lifecycleSeconds ?? lifecycleSecondsFromEnv();
  registerVideoResultRoutes(app, state.links);
  registerWanRoutes(app, state, { lifecycleSeconds });
  registerXaiVideoRoutes(app, state, { lifecycleSeconds });
}
