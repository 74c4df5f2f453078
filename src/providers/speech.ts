/**
 * @module providers/speech
 * Builds (once per route) the speech adapter for a route, by the route's adapter name.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { SpeechModel } from "../spec/index.ts";
import { DashScopeSpeechModel } from "./dashscope/dashscope-speech-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { perRoute } from "./kit/per-route.ts";

export function createSpeechModels(
  http: HttpClient,
): (route: ResolvedRoute) => SpeechModel | undefined {
  return perRoute<SpeechModel>(http, (route, config) =>
    route.adapter === "dashscope" ? new DashScopeSpeechModel(config) : undefined,
  );
}
