/**
 * @module providers/embeddings
 * Builds (and caches) the embedding adapter for a route, by the route's adapter name.
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { EmbeddingModel } from "../spec/index.ts";
import type { HttpClient } from "./kit/http-client.ts";

export function createEmbeddingModels(
  _http: HttpClient,
): (route: ResolvedRoute) => EmbeddingModel | undefined {
  return () => undefined;
}
