/**
 * @module providers/registry
 * Builds adapter instances for resolved catalog routes. Adapters are created once per route and
 * reused (`kit/per-route.ts`); the registry is built by `main.ts` and handed to endpoints as an interface.
 */
import type { EndpointKind, ResolvedRoute } from "../catalog/index.ts";
import type {
  ChatModel,
  EmbeddingModel,
  ImageModel,
  MessagesPassthroughModel,
  ResponsesPassthroughModel,
  SpeechModel,
  VideoModel,
} from "../spec/index.ts";
import { AnthropicChatModel } from "./anthropic/anthropic-chat-model.ts";
import { AnthropicPassthrough } from "./anthropic/anthropic-passthrough.ts";
import { createEmbeddingModels } from "./embeddings.ts";
import { GeminiChatModel } from "./gemini/gemini-chat-model.ts";
import { createImageModels } from "./images.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { perRoute } from "./kit/per-route.ts";
import { OpenAICompatibleChatModel } from "./openai-compatible/openai-compatible-chat-model.ts";
import { OpenAIResponsesPassthrough } from "./openai-compatible/openai-responses-passthrough.ts";
import { createSpeechModels } from "./speech.ts";
import { createVideoModels } from "./videos.ts";

/** The vendor whose routes serve OpenAI's Responses API natively. */
const RESPONSES_VENDOR = "openai";

export interface ProviderRegistry {
  /** The chat adapter for a route, or undefined when the route's protocol has no chat adapter. */
  chatModel(route: ResolvedRoute): ChatModel | undefined;
  /** The embedding adapter for a route (see `embeddings.ts`), or undefined. */
  embeddingModel(route: ResolvedRoute): EmbeddingModel | undefined;
  /** The speech adapter for a route (see `speech.ts`), or undefined. */
  speechModel(route: ResolvedRoute): SpeechModel | undefined;
  /** The image adapter for a route (see `images.ts`), or undefined. */
  imageModel(route: ResolvedRoute): ImageModel | undefined;
  /** The video adapter for a route (see `videos.ts`), or undefined. */
  videoModel(route: ResolvedRoute): VideoModel | undefined;
  /** The native `/v1/messages` client for an Anthropic-protocol route, else undefined. */
  messagesPassthrough(route: ResolvedRoute): MessagesPassthroughModel | undefined;
  /**
   * OpenAI's own `/v1/responses` for a route of the `openai` vendor (the only one serving the
   * Responses API), else undefined.
   */
  responsesPassthrough(route: ResolvedRoute): ResponsesPassthroughModel | undefined;
  /** Whether an adapter can serve `route` for an endpoint of this kind. */
  serves(kind: EndpointKind, route: ResolvedRoute): boolean;
  /** Closes the upstream connection pool. */
  close(): Promise<void>;
}

export function createProviderRegistry(http: HttpClient): ProviderRegistry {
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
        case "video":
          return registry.videoModel(route) !== undefined;
        default:
          return false;
      }
    },
    embeddingModel: createEmbeddingModels(http),
    speechModel: createSpeechModels(http),
    imageModel: createImageModels(http),
    videoModel: createVideoModels(http),
    messagesPassthrough: perRoute<MessagesPassthroughModel>(http, (route, config) =>
      route.adapter === "anthropic" ? new AnthropicPassthrough(config) : undefined,
    ),
    responsesPassthrough: perRoute<ResponsesPassthroughModel>(http, (route, config) =>
      route.vendor === RESPONSES_VENDOR && route.adapter === "openai-compatible"
        ? new OpenAIResponsesPassthrough(config)
        : undefined,
    ),
    chatModel: perRoute<ChatModel>(http, (route, config) => {
      switch (route.adapter) {
        case "openai-compatible":
          return new OpenAICompatibleChatModel(config);
        case "anthropic":
          return new AnthropicChatModel(config);
        case "gemini":
          return new GeminiChatModel(config);
        default:
          return undefined;
      }
    }),
  };
  return registry;
}
