/**
 * @module providers/voyage/voyage-embedding-model
 * Embedding adapter for Voyage AI: `POST {baseUrl}/embeddings` with `{model, input,
 * output_dimension}` (Voyage rejects OpenAI's `dimensions`), floats in, OpenAI-shaped list out,
 * `usage.total_tokens` only. Errors are FastAPI's `{"detail": "..."}`. Limits: 1,000 inputs per
 * call and a per-model token cap per batch (120K / 320K / 1M for the 4-series).
 * @see https://docs.voyageai.com/reference/embeddings-api
 */
import type { EmbeddingCallOptions, EmbeddingModel, EmbeddingResult } from "../../spec/index.ts";
import { type HttpClient, headerValue, type UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";
import { tokenCount } from "../kit/token-counts.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { readEmbeddingList } from "../openai-compatible/openai-embedding-response.ts";

export const VOYAGE_MAX_INPUTS = 1000;

/** Tokens per submitted batch, by model; unknown models get the smallest cap. */
export const VOYAGE_TOKEN_LIMITS: Readonly<Record<string, number>> = {
  "voyage-4-large": 120_000,
  "voyage-4": 320_000,
  "voyage-4-lite": 1_000_000,
  "voyage-3-large": 120_000,
  "voyage-3.5": 320_000,
  "voyage-3.5-lite": 1_000_000,
  "voyage-code-3": 120_000,
};
const DEFAULT_TOKEN_LIMIT = 120_000;

export interface VoyageEmbeddingConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  /** The route's upstream model, which decides the token cap. */
  upstreamModel: string;
  provider?: string;
}

/** `{"detail": "..."}` (a string, or FastAPI's list of validation errors). */
export function readVoyageErrorFields(body: unknown): { message?: string; code?: string } {
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === "string") return { message: detail };
  if (Array.isArray(detail)) {
    const messages = detail
      .map((item: { msg?: unknown } | null) => (typeof item?.msg === "string" ? item.msg : ""))
      .filter((message) => message !== "");
    return messages.length ? { message: messages.join("; ") } : {};
  }
  return {};
}

function readVoyageError(response: UpstreamResponse) {
  return readUpstreamError(response, readVoyageErrorFields, "request-id");
}

export class VoyageEmbeddingModel implements EmbeddingModel {
  readonly specificationVersion = "switchyard-embedding-1" as const;
  readonly provider: string;
  readonly maxInputsPerCall = VOYAGE_MAX_INPUTS;
  readonly maxTokensPerCall: number;
  readonly #config: VoyageEmbeddingConfig;

  constructor(config: VoyageEmbeddingConfig) {
    this.#config = config;
    this.provider = config.provider ?? "voyage";
    this.maxTokensPerCall = VOYAGE_TOKEN_LIMITS[config.upstreamModel] ?? DEFAULT_TOKEN_LIMIT;
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
          ...(options.dimensions !== undefined ? { output_dimension: options.dimensions } : {}),
        }),
        signal: options.abortSignal,
        totalDeadline: true,
        readError: readVoyageError,
      },
    );
    const requestId =
      headerValue(response.headers, "request-id") ?? headerValue(response.headers, "x-request-id");
    return readJsonObject(response, options.abortSignal, (answer) => {
      const body = answer as { model?: unknown; usage?: { total_tokens?: unknown } | null };
      return {
        embeddings: readEmbeddingList(body, options.inputs.length),
        tokens: tokenCount(body.usage?.total_tokens),
        ...(requestId ? { upstreamRequestId: requestId } : {}),
        servedBy: typeof body.model === "string" ? body.model : options.upstreamModel,
        warnings: [],
      };
    });
  }
}
