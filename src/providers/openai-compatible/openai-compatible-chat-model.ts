/**
 * @module providers/openai-compatible/openai-compatible-chat-model
 * Chat adapter for every OpenAI-compatible upstream (OpenAI, DeepSeek, DashScope compatible
 * mode, Groq, Mistral, xAI, vLLM, Ollama...). Near pass-through: the model name is mapped and
 * usage is always requested in streams. With `n` above 1 every choice is read, in the body and
 * in the stream (where deltas carry their choice's index).
 */
import type {
  CallSignal,
  CallWarning,
  ChatCallOptions,
  ChatChoice,
  ChatChunkStreamPart,
  ChatFinishReason,
  ChatModel,
  ChatResult,
  ChatStreamPart,
  ChatToolCall,
  ChunkRewrite,
  TokenUsage,
} from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { type HttpClient, headerValue, toUpstreamError } from "../kit/http-client.ts";
import { decodeSseBatches } from "../kit/sse-decoder.ts";
import { toolCallName } from "../kit/tool-call-name.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { convertToOpenAIRequest } from "./convert-to-openai-request.ts";
import {
  convertOpenAIUsage,
  mapOpenAIFinishReason,
  parseOpenAIStreamChunk,
  readOpenAIContent,
  readOpenAIError,
} from "./map-openai-response.ts";
import { passThroughChunks } from "./openai-chunk-passthrough.ts";

export interface OpenAICompatibleConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

interface OpenAIChoiceMessage {
  /** A string, or Magistral's list of text and thinking parts (`readOpenAIContent`). */
  content?: unknown;
  reasoning_content?: string | null;
  /** Reasoning as Groq (and others serving open-weight models) write it. */
  reasoning?: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

interface OpenAICompletionChoice {
  index?: number;
  message?: OpenAIChoiceMessage;
  finish_reason?: string;
}

interface OpenAICompletion {
  id?: string;
  choices?: OpenAICompletionChoice[];
  usage?: unknown;
}

interface OpenAIChunk {
  id?: string;
  choices?: Array<{
    index?: number;
    delta?: {
      content?: unknown;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
    finish_reason?: string | null;
  }> | null;
  usage?: unknown;
  error?: { message?: string; code?: string };
}

export class OpenAICompatibleChatModel implements ChatModel {
  readonly specificationVersion = "switchyard-chat-1" as const;
  readonly provider: string;
  readonly #config: OpenAICompatibleConfig;

  constructor(config: OpenAICompatibleConfig) {
    this.#config = config;
    this.provider = config.provider ?? "openai-compatible";
  }

  async #post(options: ChatCallOptions, stream: boolean) {
    const request = convertToOpenAIRequest(options, stream);
    const response = await postUpstream(
      this.#config.http,
      `${this.#config.baseUrl}/chat/completions`,
      {
        headers: {
          // A keyless self-hosted server gets no Authorization header at all.
          ...(this.#config.apiKey ? { authorization: `Bearer ${this.#config.apiKey}` } : {}),
          "content-type": "application/json",
          ...(stream ? { accept: "text/event-stream" } : {}),
          ...options.forwardHeaders,
        },
        body: JSON.stringify(request.body),
        signal: options.abortSignal,
        // A whole answer arrives within a deadline; a stream is bounded by its idle timeout.
        totalDeadline: !stream,
        readError: readOpenAIError,
      },
    );
    return { response, warnings: request.warnings };
  }

  async doGenerate(options: ChatCallOptions): Promise<ChatResult> {
    const { response, warnings } = await this.#post(options, false);
    return readJsonObject(response, options.abortSignal, (answer) => {
      const body = answer as OpenAICompletion;
      const choices = (body.choices ?? [])
        .map((choice, position) => ({ choice, index: choice.index ?? position }))
        .sort((a, b) => a.index - b.index)
        .map(({ choice }) => readChoice(choice));
      const first = choices[0] ?? readChoice(undefined);
      return {
        id: body.id,
        ...first,
        ...((options.choiceCount ?? 1) > 1 ? { choices } : {}),
        usage: convertOpenAIUsage(body.usage),
        upstreamRequestId: headerValue(response.headers, "x-request-id"),
        warnings,
      };
    });
  }

  async doStreamChunks(
    options: ChatCallOptions,
    rewrite: ChunkRewrite,
  ): Promise<AsyncIterable<ChatChunkStreamPart>> {
    const { response } = await this.#post(options, true);
    return passThroughChunks(
      decodeSseBatches(response.body),
      rewrite,
      options.choiceCount ?? 1,
      options.abortSignal,
    );
  }

  async doStream(options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>> {
    const { response, warnings } = await this.#post(options, true);
    return openAIStreamParts({
      body: response.body,
      warnings,
      upstreamRequestId: headerValue(response.headers, "x-request-id"),
      signal: options.abortSignal,
      choiceCount: options.choiceCount ?? 1,
    });
  }
}

/**
 * An OpenAI-compatible stream's chunks as typed parts. Made once, not per call: V8 keeps a
 * generator function made per call, and all it closes over, until its next full collection.
 */
async function* openAIStreamParts(stream: {
  body: Parameters<typeof decodeSseBatches>[0];
  warnings: CallWarning[];
  upstreamRequestId: string | undefined;
  signal: CallSignal | undefined;
  choiceCount: number;
}): AsyncGenerator<ChatStreamPart> {
  const { upstreamRequestId } = stream;
  yield { type: "stream-start", warnings: stream.warnings, upstreamRequestId };
  const finishReasons: ChatFinishReason[] = [];
  let usage: TokenUsage | undefined;
  /** Tool calls started, by `<choice>:<index>`. */
  const toolCalls = new Map<string, ChatToolCall>();
  try {
    let done = false;
    for await (const events of decodeSseBatches(stream.body))
      for (const event of events) {
        // Read on to the end of the body after [DONE] rather than leaving the loop: a body
        // dropped half-read costs an abort error and the connection, which cannot be reused.
        if (done || event.data === "[DONE]") {
          done = true;
          continue;
        }
        const chunk = parseOpenAIStreamChunk<OpenAIChunk>(event.data);
        usage = convertOpenAIUsage(chunk.usage) ?? usage;
        for (const choice of chunk.choices ?? []) {
          const index = choice.index ?? 0;
          // The first choice's parts carry no index, as when only one was asked for.
          const of = index === 0 ? {} : { choice: index };
          const delta = choice.delta ?? {};
          const content = readOpenAIContent(delta.content);
          const reasoning = delta.reasoning_content || delta.reasoning || content.reasoning;
          if (reasoning) yield { type: "reasoning-delta", delta: reasoning, ...of };
          if (content.text) yield { type: "text-delta", delta: content.text, ...of };
          for (const call of delta.tool_calls ?? []) {
            const key = `${index}:${call.index}`;
            if (!toolCalls.has(key)) {
              const started = {
                id: call.id ?? `call_${call.index}`,
                name: toolCallName(call.function?.name, upstreamRequestId),
                arguments: "",
              };
              toolCalls.set(key, started);
              yield {
                type: "tool-call-start",
                index: call.index,
                id: started.id,
                name: started.name,
                ...of,
              };
            }
            const fragment = call.function?.arguments;
            if (fragment)
              yield {
                type: "tool-call-delta",
                index: call.index,
                argumentsDelta: fragment,
                ...of,
              };
          }
          if (choice.finish_reason)
            finishReasons[index] = mapOpenAIFinishReason(choice.finish_reason);
        }
      }
  } catch (error) {
    throw toUpstreamError(error, stream.signal);
  }
  const first = finishReasons[0];
  if (first === undefined) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream stream ended before it finished.",
    });
  }
  const several = finishReasons.length > 1 || stream.choiceCount > 1;
  yield {
    type: "finish",
    finishReason: first,
    ...(several ? { finishReasons: Array.from(finishReasons, (reason) => reason ?? first) } : {}),
    usage,
  };
}

function readChoice(choice: OpenAICompletionChoice | undefined): ChatChoice {
  const message = choice?.message ?? {};
  const content = readOpenAIContent(message.content);
  const reasoning = message.reasoning_content || message.reasoning || content.reasoning;
  return {
    text: content.text,
    ...(reasoning ? { reasoning } : {}),
    toolCalls: (message.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: toolCallName(call.function?.name),
      arguments: call.function?.arguments ?? "",
    })),
    finishReason: mapOpenAIFinishReason(choice?.finish_reason),
  };
}
