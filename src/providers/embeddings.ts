/**
 * @module providers/embeddings
 * Builds (and caches) the embedding adapter for a route, by the route's adapter name:
 * `openai-compatible` (DashScope compatible mode, OpenAI), `voyage` and `gemini`. An adapter is
 * built per upstream model too, because its declared per-call limits depend on the model.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { EmbeddingModel } from "../spec/index.ts";
import { GeminiEmbeddingModel } from "./gemini/gemini-embedding-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { OpenAICompatibleEmbeddingModel } from "./openai-compatible/openai-compatible-embedding-model.ts";
import { VoyageEmbeddingModel } from "./voyage/voyage-embedding-model.ts";

export function createEmbeddingModels(
  http: HttpClient,
): (route: ResolvedRoute) => EmbeddingModel | undefined {
  const models = new Map<string, EmbeddingModel>();
  return (route) => {
    const cacheKey = [
      route.adapter,
      route.baseUrl,
      route.apiKey,
      route.upstreamModel,
      JSON.stringify(route.timeouts ?? {}),
    ].join(" ");
    const cached = models.get(cacheKey);
    if (cached) return cached;
    const config = {
      baseUrl: route.baseUrl,
      apiKey: route.apiKey,
      http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
      provider: route.vendor,
      upstreamModel: route.upstreamModel,
    };
    let model: EmbeddingModel;
    switch (route.adapter) {
      case "openai-compatible":
        model = new OpenAICompatibleEmbeddingModel(config);
        break;
      case "voyage":
        model = new VoyageEmbeddingModel(config);
        break;
      case "gemini":
        model = new GeminiEmbeddingModel(config);
        break;
      default:
        return undefined;
    }
    models.set(cacheKey, model);
    return model;
  };
}
