/**
 * @module providers/gemini/gemini-embedding-model
 * Embedding adapter for the Gemini API: `POST {baseUrl}/models/{model}:batchEmbedContents` with
 * one `{model, content:{parts:[{text}]}, outputDimensionality}` request per input (at most 100
 * per call), authenticated with `x-goog-api-key`. The Gemini API reports no token usage
 * (`tokens` is undefined; the gateway counts them). Vectors truncated below the model's full
 * size are not unit length upstream, so they are renormalized here. A model the vendor has
 * retired (`text-embedding-004`) is served by its stand-in at the same size, with a warning.
 * @see https://ai.google.dev/api/embeddings
 */
import type {
  CallWarning,
  EmbeddingCallOptions,
  EmbeddingModel,
  EmbeddingResult,
} from "../../spec/index.ts";
import { toUnitLength, UpstreamError, vectorLength } from "../../spec/index.ts";
import { type HttpClient, headerValue } from "../kit/http-client.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { usableVector } from "../kit/usable-vector.ts";
import { readGeminiError } from "./gemini-error.ts";

export const GEMINI_MAX_BATCH = 100;

/** Models shut down on the Gemini API, and the live model (at the same size) that serves them. */
export const RETIRED_GEMINI_EMBEDDING_MODELS: Readonly<
  Record<string, { standIn: string; dimensions: number; retired: string }>
> = {
  "text-embedding-004": { standIn: "gemini-embedding-001", dimensions: 768, retired: "2026-01-14" },
};

export interface GeminiEmbeddingConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

/** Scales a vector to unit length (unchanged when it already is, or is all zeros). */
export function normalizeVector(vector: number[]): number[] {
  const length = vectorLength(vector);
  if (length === 0 || Math.abs(length - 1) < 1e-6) return vector;
  return toUnitLength(vector);
}

function readVectors(body: unknown, count: number): number[][] {
  const embeddings = (body as { embeddings?: unknown } | null)?.embeddings;
  const vectors = Array.isArray(embeddings)
    ? embeddings.map((item: { values?: unknown } | null) => item?.values)
    : [];
  if (vectors.length !== count || !vectors.every(usableVector)) {
    throw new UpstreamError({
      kind: "protocol",
      message:
        vectors.length === count
          ? "Upstream answered an embedding that is not a list of finite numbers."
          : `Upstream answered ${vectors.length} embeddings for ${count} inputs.`,
      body,
    });
  }
  return (vectors as number[][]).map(normalizeVector);
}

export class GeminiEmbeddingModel implements EmbeddingModel {
  readonly specificationVersion = "switchyard-embedding-1" as const;
  readonly provider: string;
  readonly maxInputsPerCall = GEMINI_MAX_BATCH;
  readonly #config: GeminiEmbeddingConfig;

  constructor(config: GeminiEmbeddingConfig) {
    this.#config = config;
    this.provider = config.provider ?? "gemini";
  }

  async doEmbed(options: EmbeddingCallOptions): Promise<EmbeddingResult> {
    const retired = RETIRED_GEMINI_EMBEDDING_MODELS[options.upstreamModel];
    const model = retired?.standIn ?? options.upstreamModel;
    const dimensions = options.dimensions ?? retired?.dimensions;
    const warnings: CallWarning[] = retired
      ? [
          {
            type: "compatibility",
            setting: "model",
            details: `${options.upstreamModel} was retired by its vendor on ${retired.retired}; served by ${model}`,
          },
        ]
      : [];
    const path = model.split("/").map(encodeURIComponent).join("/");
    const response = await postUpstream(
      this.#config.http,
      `${this.#config.baseUrl.replace(/\/+$/, "")}/models/${path}:batchEmbedContents`,
      {
        headers: {
          ...(this.#config.apiKey ? { "x-goog-api-key": this.#config.apiKey } : {}),
          "content-type": "application/json",
        },
        body: JSON.stringify({
          requests: options.inputs.map((text) => ({
            model: `models/${model}`,
            content: { parts: [{ text }] },
            ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
          })),
        }),
        signal: options.abortSignal,
        totalDeadline: true,
        readError: readGeminiError,
      },
    );
    const embeddings = await readJsonObject(response, options.abortSignal, (body) =>
      readVectors(body, options.inputs.length),
    );
    const requestId = headerValue(response.headers, "x-request-id");
    return {
      embeddings,
      tokens: undefined,
      ...(requestId ? { upstreamRequestId: requestId } : {}),
      servedBy: model,
      warnings,
    };
  }
}
