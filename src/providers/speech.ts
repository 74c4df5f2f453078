/**
 * @module providers/speech
 * Builds (and caches) the speech adapter for a route, by the route's adapter name.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { SpeechModel } from "../spec/index.ts";
import { DashScopeSpeechModel } from "./dashscope/dashscope-speech-model.ts";
import type { HttpClient } from "./kit/http-client.ts";

export function createSpeechModels(
  http: HttpClient,
): (route: ResolvedRoute) => SpeechModel | undefined {
  const models = new Map<string, SpeechModel>();
  return (route) => {
    if (route.adapter !== "dashscope") return undefined;
    const cacheKey = `${route.adapter} ${route.baseUrl} ${route.apiKey} ${JSON.stringify(route.timeouts ?? {})}`;
    let model = models.get(cacheKey);
    if (!model) {
      model = new DashScopeSpeechModel({
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
        provider: route.vendor,
      });
      models.set(cacheKey, model);
    }
    return model;
  };
}
