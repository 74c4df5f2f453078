/**
 * @module providers/speech
 * Builds (and caches) the speech adapter for a route, by the route's adapter name.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { SpeechModel } from "../spec/index.ts";
import type { HttpClient } from "./kit/http-client.ts";

export function createSpeechModels(
  _http: HttpClient,
): (route: ResolvedRoute) => SpeechModel | undefined {
  return () => undefined;
}
