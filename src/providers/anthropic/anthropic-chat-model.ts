/**
 * @module providers/anthropic/anthropic-chat-model
 * Chat adapter for the Anthropic Messages API: `POST {baseUrl}/v1/messages` with `x-api-key`
 * and `anthropic-version` (unless the caller forwards its own, e.g. from Claude Code, together
 * with `anthropic-beta`). The request mapping lives in `convert-to-anthropic-request.ts`, the
 * stream mapping in `anthropic-stream.ts`; this class only sends and reads.
 * @see https://docs.anthropic.com/en/api/messages
 */
import type {
  ChatCallOptions,
  ChatModel,
  ChatResult,
  ChatStreamPart,
  ChatToolCall,
} from "../../spec/index.ts";
import { type HttpClient, headerValue, type UpstreamResponse } from "../kit/http-client.ts";
import { decodeSseBatches } from "../kit/sse-decoder.ts";
import { toolCallName } from "../kit/tool-call-name.ts";
import { postUpstream, readJsonObject, withUpstreamErrors } from "../kit/upstream-call.ts";
import type { AnthropicResponse } from "./anthropic-api.ts";
import { ANTHROPIC_REQUEST_ID_HEADER, readAnthropicError } from "./anthropic-error.ts";
import { outputFinishReason, outputToolText } from "./anthropic-json-output.ts";
import { parseAnthropicStream } from "./anthropic-stream.ts";
import { convertAnthropicUsage } from "./convert-anthropic-usage.ts";
import {
  type AnthropicRequest,
  convertToAnthropicRequest,
} from "./convert-to-anthropic-request.ts";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.ts";

export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicConfig {
  /** Without `/v1`, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

function hasHeader(headers: Record<string, string> | undefined, name: string): boolean {
  return Object.keys(headers ?? {}).some((key) => key.toLowerCase() === name);
}

/** Joins the text (or thinking) of the response's blocks of one type; null when there are none. */
function joinBlocks(body: AnthropicResponse, type: "text" | "thinking"): string | null {
  const blocks = (body.content ?? []).filter((block) => block.type === type);
  if (blocks.length === 0) return null;
  return blocks.map((block) => (type === "text" ? block.text : block.thinking) ?? "").join("");
}

export class AnthropicChatModel implements ChatModel {
  readonly specificationVersion = "switchyard-chat-1" as const;
  readonly provider: string;
  readonly #config: AnthropicConfig;

  constructor(config: AnthropicConfig) {
    this.#config = config;
    this.provider = config.provider ?? "anthropic";
  }

  async #post(options: ChatCallOptions, stream: boolean) {
    const request = convertToAnthropicRequest(options, stream);
    const response = await postUpstream(this.#config.http, `${this.#config.baseUrl}/v1/messages`, {
      headers: {
        ...(this.#config.apiKey ? { "x-api-key": this.#config.apiKey } : {}),
        ...(hasHeader(options.forwardHeaders, "anthropic-version")
          ? {}
          : { "anthropic-version": ANTHROPIC_VERSION }),
        "content-type": "application/json",
        ...(stream ? { accept: "text/event-stream" } : {}),
        ...options.forwardHeaders,
      },
      body: JSON.stringify(request.body),
      signal: options.abortSignal,
      // A whole answer arrives within a deadline; a stream is bounded by its idle timeout.
      totalDeadline: !stream,
      readError: readAnthropicError,
    });
    return { request, response };
  }

  async doGenerate(options: ChatCallOptions): Promise<ChatResult> {
    const { request, response } = await this.#post(options, false);
    return readJsonObject(response, options.abortSignal, (answer) =>
      this.#result(answer as AnthropicResponse, request, response),
    );
  }

  #result(
    body: AnthropicResponse,
    request: AnthropicRequest,
    response: UpstreamResponse,
  ): ChatResult {
    const outputTool = request.outputTool;
    let answer: string | undefined;
    const toolCalls: ChatToolCall[] = [];
    for (const block of body.content ?? []) {
      if (block.type !== "tool_use") continue;
      if (outputTool && block.name === outputTool.name) {
        answer ??= outputToolText(block.input, outputTool);
      } else {
        toolCalls.push({
          id: block.id ?? "",
          name: toolCallName(block.name),
          arguments: JSON.stringify(block.input ?? {}),
        });
      }
    }
    // The output tool's input is the whole answer: text around it would spoil the JSON.
    const text = answer ?? joinBlocks(body, "text");
    const reasoning = joinBlocks(body, "thinking");
    return {
      id: body.id,
      text: request.prefill !== undefined ? request.prefill + (text ?? "") : text,
      ...(reasoning ? { reasoning } : {}),
      toolCalls,
      finishReason: outputFinishReason(
        mapAnthropicStopReason(body.stop_reason),
        answer !== undefined,
        toolCalls.length,
      ),
      usage: convertAnthropicUsage(body.usage),
      upstreamRequestId: headerValue(response.headers, ANTHROPIC_REQUEST_ID_HEADER),
      warnings: request.warnings,
    };
  }

  async doStream(options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>> {
    const { request, response } = await this.#post(options, true);
    const parts = parseAnthropicStream(decodeSseBatches(response.body), {
      warnings: request.warnings,
      upstreamRequestId: headerValue(response.headers, ANTHROPIC_REQUEST_ID_HEADER),
      prefill: request.prefill,
      outputTool: request.outputTool,
    });
    return withUpstreamErrors(parts, options.abortSignal);
  }
}
