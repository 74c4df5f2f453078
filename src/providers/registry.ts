/**
 * @module providers/registry
 * Builds adapter instances for resolved catalog routes. Adapters are created once per route and
 * reused; the registry is built by `main.ts` and handed to endpoints as an interface.
 */
import type { EndpointKind, ResolvedRoute } from "../catalog/index.ts";
import type {
  ChatModel,
  EmbeddingModel,
  ImageModel,
  MessagesPassthroughModel,
  SpeechModel,
} from "../spec/index.ts";
import { AnthropicChatModel } from "./anthropic/anthropic-chat-model.ts";
import { AnthropicPassthrough } from "./anthropic/anthropic-passthrough.ts";
import { createEmbeddingModels } from "./embeddings.ts";
import { GeminiChatModel } from "./gemini/gemini-chat-model.ts";
import { createImageModels } from "./images.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { OpenAICompatibleChatModel } from "./openai-compatible/openai-compatible-chat-model.ts";
import { createSpeechModels } from "./speech.ts";

export interface ProviderRegistry {
  /** The chat adapter for a route, or undefined when the route's protocol has no chat adapter. */
  chatModel(route: ResolvedRoute): ChatModel | undefined;
  /** The embedding adapter for a route (see `embeddings.ts`), or undefined. */
  embeddingModel(route: ResolvedRoute): EmbeddingModel | undefined;
  /** The speech adapter for a route (see `speech.ts`), or undefined. */
  speechModel(route: ResolvedRoute): SpeechModel | undefined;
  /** The image adapter for a route (see `images.ts`), or undefined. */
  imageModel(route: ResolvedRoute): ImageModel | undefined;
  /** The native `/v1/messages` client for an Anthropic-protocol route, else undefined. */
  messagesPassthrough(route: ResolvedRoute): MessagesPassthroughModel | undefined;
  /** Whether an adapter can serve `route` for an endpoint of this kind. */
  serves(kind: EndpointKind, route: ResolvedRoute): boolean;
  /** Closes the upstream connection pool. */
  close(): Promise<void>;
}

export function createProviderRegistry(http: HttpClient): ProviderRegistry {
  const chatModels = new Map<string, ChatModel>();
  // Resolved routes are built once by the catalog, so each route object finds its adapter
  // without building a cache key per request.
  const byRoute = new WeakMap<ResolvedRoute, ChatModel>();
  const passthroughs = new Map<string, MessagesPassthroughModel>();
  const embeddings = createEmbeddingModels(http);
  const speech = createSpeechModels(http);
  const registry: ProviderRegistry = {
    close: () => http.close(),
    serves(kind, route) {
      switch (kind) {
        case "chat":
          return registry.chatModel(route) !== undefined;
        case "embedding":
          return registry.embeddingModel(route) !== undefined;
        case "speech":
          return registry.speechModel(route) !== undefined;
        case "image-generation":
        case "image-edit":
          return registry.imageModel(route) !== undefined;
        default:
          return false;
      }
    },
    embeddingModel: (route) => embeddings(route),
    speechModel: (route) => speech(route),
    imageModel: createImageModels(http),
    messagesPassthrough(route) {
      if (route.adapter !== "anthropic") return undefined;
      const cacheKey = `${route.baseUrl} ${route.apiKey} ${JSON.stringify(route.timeouts ?? {})}`;
      let model = passthroughs.get(cacheKey);
      if (!model) {
        model = new AnthropicPassthrough({
          baseUrl: route.baseUrl,
          apiKey: route.apiKey,
          http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
        });
        passthroughs.set(cacheKey, model);
      }
      return model;
    },
    chatModel(route) {
      const known = byRoute.get(route);
      if (known) return known;
      const cacheKey = `${route.adapter} ${route.baseUrl} ${route.apiKey} ${JSON.stringify(route.timeouts ?? {})}`;
      let model = chatModels.get(cacheKey);
      if (!model) {
        const config = {
          baseUrl: route.baseUrl,
          apiKey: route.apiKey,
          http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
          provider: route.vendor,
        };
        switch (route.adapter) {
          case "openai-compatible":
            model = new OpenAICompatibleChatModel(config);
            break;
          case "anthropic":
            model = new AnthropicChatModel(config);
            break;
          case "gemini":
            model = new GeminiChatModel(config);
            break;
          default:
            return undefined;
        }
        chatModels.set(cacheKey, model);
      }
      byRoute.set(route, model);
      return model;
    },
  };
  return registry;
}
