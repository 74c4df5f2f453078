/**
 * @module providers/openai-compatible/openai-compatible-embedding-model
 * Embedding adapter for OpenAI-compatible upstreams (DashScope compatible mode above all, also
 * OpenAI itself): `POST {baseUrl}/embeddings` with `{model, input, dimensions, encoding_format:
 * "float"}`. Floats are always asked for (DashScope answers nothing else); the gateway encodes
 * base64 itself. The per-call limits are known per upstream model.
 * @see https://www.alibabacloud.com/help/en/model-studio/embedding
 */
import type { EmbeddingCallOptions, EmbeddingModel, EmbeddingResult } from "../../spec/index.ts";
import { type HttpClient, headerValue } from "../kit/http-client.ts";
import { tokenCount } from "../kit/token-counts.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { readOpenAIError } from "./map-openai-response.ts";
import { readEmbeddingList } from "./openai-embedding-response.ts";

export interface EmbeddingLimits {
  inputs: number;
  tokens?: number;
}

/** Inputs (and tokens) one call may carry, by upstream model. */
export const OPENAI_COMPATIBLE_EMBEDDING_LIMITS: Readonly<Record<string, EmbeddingLimits>> = {
  // DashScope: 10 inputs of at most 8,192 tokens each (v1 and v2 took 25).
  "text-embedding-v4": { inputs: 10 },
  "text-embedding-v3": { inputs: 10 },
  "text-embedding-v2": { inputs: 25 },
  "text-embedding-v1": { inputs: 25 },
};
/** OpenAI's own limits, used for models not listed above. */
export const DEFAULT_OPENAI_EMBEDDING_LIMITS: EmbeddingLimits = { inputs: 2048, tokens: 300_000 };

export interface OpenAICompatibleEmbeddingConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  /** The route's upstream model, which decides the limits. */
  upstreamModel: string;
  provider?: string;
}

export class OpenAICompatibleEmbeddingModel implements EmbeddingModel {
  readonly specificationVersion = "switchyard-embedding-1" as const;
  readonly provider: string;
  readonly maxInputsPerCall: number;
  readonly maxTokensPerCall?: number;
  readonly #config: OpenAICompatibleEmbeddingConfig;

  constructor(config: OpenAICompatibleEmbeddingConfig) {
    this.#config = config;
    this.provider = config.provider ?? "openai-compatible";
    const limits =
      OPENAI_COMPATIBLE_EMBEDDING_LIMITS[config.upstreamModel] ?? DEFAULT_OPENAI_EMBEDDING_LIMITS;
    this.maxInputsPerCall = limits.inputs;
    if (limits.tokens !== undefined) this.maxTokensPerCall = limits.tokens;
  }

  async doEmbed(options: EmbeddingCallOptions): Promise<EmbeddingResult> {
    const response = await postUpstream(
      this.#config.http,
      `${this.#config.baseUrl.replace(/\/+$/, "")}/embeddings`,
      {
        headers: {
          ...(this.#config.apiKey ? { authorization: `Bearer ${this.#config.apiKey}` } : {}),
          "content-type": "application/json",
        },
        body: JSON.stringify({
          model: options.upstreamModel,
          input: options.inputs,
          ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {}),
          encoding_format: "float",
        }),
        signal: options.abortSignal,
        totalDeadline: true,
        readError: readOpenAIError,
      },
    );
    return readJsonObject(response, options.abortSignal, (answer) => {
      const body = answer as {
        id?: unknown;
        model?: unknown;
        usage?: { prompt_tokens?: unknown; total_tokens?: unknown } | null;
      };
      const requestId =
        headerValue(response.headers, "x-request-id") ??
        (typeof body.id === "string" ? body.id : undefined);
      return {
        embeddings: readEmbeddingList(body, options.inputs.length),
        tokens: tokenCount(body.usage?.prompt_tokens) ?? tokenCount(body.usage?.total_tokens),
        ...(requestId ? { upstreamRequestId: requestId } : {}),
        servedBy: typeof body.model === "string" ? body.model : options.upstreamModel,
        warnings: [],
      };
    });
  }
}
