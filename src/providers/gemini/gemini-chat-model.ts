/**
 * @module providers/gemini/gemini-chat-model
 * Chat adapter for the Gemini API: `POST {baseUrl}/models/{model}:generateContent`, and
 * `:streamGenerateContent?alt=sse` for streams, authenticated with `x-goog-api-key`. The body is
 * built by `convertToGeminiRequest`; answers are read by `readGeminiResponse` and
 * `toChatStreamParts`; errors by `readGeminiError` (Google's envelope).
 * @see https://ai.google.dev/api/generate-content
 */
import type { ChatCallOptions, ChatModel, ChatResult, ChatStreamPart } from "../../spec/index.ts";
import { type HttpClient, headerValue } from "../kit/http-client.ts";
import { decodeSseBatches } from "../kit/sse-decoder.ts";
import { postUpstream, readJsonObject, withUpstreamErrors } from "../kit/upstream-call.ts";
import { convertToGeminiRequest } from "./convert-to-gemini-request.ts";
import type { GeminiResponse } from "./gemini-api-types.ts";
import { readGeminiError } from "./gemini-error.ts";
import { toChatStreamParts } from "./gemini-stream-parts.ts";
import { readGeminiResponse } from "./read-gemini-response.ts";

export interface GeminiConfig {
  /** e.g. `https://generativelanguage.googleapis.com/v1beta`, without a trailing slash. */
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

  /** The URL of a model method; the model name is path-encoded, its `/`s kept (`tunedModels/x`). */
  #url(model: string, stream: boolean): string {
    const path = model.split("/").map(encodeURIComponent).join("/");
    const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
    return `${this.#config.baseUrl.replace(/\/+$/, "")}/models/${path}:${method}`;
  }

  async #post(options: ChatCallOptions, body: Record<string, unknown>, stream: boolean) {
    return postUpstream(this.#config.http, this.#url(options.upstreamModel, stream), {
      headers: {
        ...(this.#config.apiKey ? { "x-goog-api-key": this.#config.apiKey } : {}),
        "content-type": "application/json",
        ...(stream ? { accept: "text/event-stream" } : {}),
        ...options.forwardHeaders,
      },
      body: JSON.stringify(body),
      signal: options.abortSignal,
      // A whole answer arrives within a deadline; a stream is bounded by its idle timeout.
      totalDeadline: !stream,
      readError: readGeminiError,
    });
  }

  async doGenerate(options: ChatCallOptions): Promise<ChatResult> {
    const { body, warnings } = convertToGeminiRequest(options);
    const response = await this.#post(options, body, false);
    const answer = await readJsonObject(response, options.abortSignal, (payload) =>
      readGeminiResponse(payload as GeminiResponse),
    );
    const upstreamRequestId = headerValue(response.headers, "x-request-id") ?? answer.id;
    return {
      ...(answer.id ? { id: answer.id } : {}),
      text: answer.text,
      ...(answer.reasoning ? { reasoning: answer.reasoning } : {}),
      toolCalls: answer.toolCalls,
      finishReason: answer.finishReason,
      usage: answer.usage,
      ...(upstreamRequestId ? { upstreamRequestId } : {}),
      warnings,
    };
  }

  async doStream(options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>> {
    const { body, warnings } = convertToGeminiRequest(options);
    const response = await this.#post(options, body, true);
    const upstreamRequestId = headerValue(response.headers, "x-request-id");
    const parts = toChatStreamParts(decodeSseBatches(response.body), {
      warnings,
      ...(upstreamRequestId ? { upstreamRequestId } : {}),
    });
    return withUpstreamErrors(parts, options.abortSignal);
  }
}
