/**
 * @module providers/gemini/gemini-chat-model
 * Chat adapter for the Gemini generateContent API.
 */
import type { ChatCallOptions, ChatModel, ChatResult, ChatStreamPart } from "../../spec/index.ts";
import type { HttpClient } from "../kit/http-client.ts";

export interface GeminiConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

export class GeminiChatModel implements ChatModel {
  readonly specificationVersion = "switchyard-chat-1" as const;
  readonly provider: string;
  readonly #config: GeminiConfig;

  constructor(config: GeminiConfig) {
    this.#config = config;
    this.provider = config.provider ?? "gemini";
  }

  async doGenerate(_options: ChatCallOptions): Promise<ChatResult> {
    throw new Error(`not implemented (${this.#config.baseUrl})`);
  }

  async doStream(_options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>> {
    throw new Error("not implemented");
  }
}
