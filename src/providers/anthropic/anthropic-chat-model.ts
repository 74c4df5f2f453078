/**
 * @module providers/anthropic/anthropic-chat-model
 * Chat adapter for the Anthropic Messages API.
 */
import type { ChatCallOptions, ChatModel, ChatResult, ChatStreamPart } from "../../spec/index.ts";
import type { HttpClient } from "../kit/http-client.ts";

export interface AnthropicConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

export class AnthropicChatModel implements ChatModel {
  readonly specificationVersion = "switchyard-chat-1" as const;
  readonly provider: string;
  readonly #config: AnthropicConfig;

  constructor(config: AnthropicConfig) {
    this.#config = config;
    this.provider = config.provider ?? "anthropic";
  }

  async doGenerate(_options: ChatCallOptions): Promise<ChatResult> {
    throw new Error(`not implemented (${this.#config.baseUrl})`);
  }

  async doStream(_options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>> {
    throw new Error("not implemented");
  }
}
