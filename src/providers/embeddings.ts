/**
 * @module providers/embeddings
 * Builds (once per route) the embedding adapter for a route, by the route's adapter name:
 * `openai-compatible` (DashScope compatible mode, OpenAI), `voyage` and `gemini`. The route's
 * upstream model is part of the adapter's config: its per-call limits depend on the model.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { EmbeddingModel } from "../spec/index.ts";
import { GeminiEmbeddingModel } from "./gemini/gemini-embedding-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { perRoute } from "./kit/per-route.ts";
import { OpenAICompatibleEmbeddingModel } from "./openai-compatible/openai-compatible-embedding-model.ts";
import { VoyageEmbeddingModel } from "./voyage/voyage-embedding-model.ts";

export function createEmbeddingModels(
  http: HttpClient,
): (route: ResolvedRoute) => EmbeddingModel | undefined {
  return perRoute<EmbeddingModel>(http, (route, config) => {
    switch (route.adapter) {
      case "openai-compatible":
        return new OpenAICompatibleEmbeddingModel(config);
      case "voyage":
        return new VoyageEmbeddingModel(config);
      case "gemini":
        return new GeminiEmbeddingModel(config);
      default:
        return undefined;
    }
  });
}
