/**
 * @module endpoints/embeddings/operation
 * The transport-free embedding request: picks a route (fallback between routes as for chat),
 * splits the batch by the route adapter's per-call limits, runs the parts concurrently with
 * retries, and answers OpenAI's list with the vectors in `index` order, fitted to the requested
 * size and encoded as asked. Usage is the upstream's token count summed over the parts; a part
 * whose upstream reports none (Gemini) is counted by the gateway and the usage marked estimated.
 * If any part fails, the request fails and nothing is charged.
 */
import { countTokensEach, TOKENIZE_LIMIT_CHARS } from "../../billing/index.ts";
import type { ResolvedRoute } from "../../catalog/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import { droppedFieldWarnings, undeclaredFields } from "../../core/dropped-fields.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import {
  type CallWarning,
  type EmbeddingModel,
  type EmbeddingResult,
  UpstreamError,
} from "../../spec/index.ts";
import { encodeEmbedding, fitDimensions } from "./encode-embedding.ts";
import { embeddingTokenUsage, TOKENIZER_MARGIN } from "./estimate-embedding-cost.ts";
import { defaultBackoffMs, runEmbeddingBatch } from "./run-embedding-batch.ts";
import { EmbeddingRequest } from "./schema.ts";
import { type BatchPart, splitEmbeddingBatch } from "./split-embedding-batch.ts";
import { inputTexts } from "./validate-embedding-request.ts";

/** Upstream calls of one request in flight at once. */
export const EMBEDDING_CONCURRENCY = 4;
/** Tries per part (the first included) before the request fails. */
export const EMBEDDING_ATTEMPTS = 3;

interface RouteOutcome {
  route: ResolvedRoute;
  parts: BatchPart[];
  results: EmbeddingResult[];
}

function embeddingAdapter(context: OperationContext, route: ResolvedRoute): EmbeddingModel {
  return adapterFor(context.services.providers, "embeddingModel", route, context.model);
}

/** The parts this route's adapter needs: its input cap (and the catalog's), its token cap. */
async function planParts(
  texts: string[],
  adapter: EmbeddingModel,
  catalogCap: number | undefined,
): Promise<BatchPart[]> {
  const maxInputs = Math.min(adapter.maxInputsPerCall, catalogCap ?? Number.POSITIVE_INFINITY);
  const noTokens = texts.map(() => 0);
  if (adapter.maxTokensPerCall === undefined) return splitEmbeddingBatch(noTokens, { maxInputs });
  // Our tokenizer is not the vendor's: keep a margin below its cap. Texts are counted exactly
  // up to the tokenizer's limit and bounded by their byte length above it (never below the
  // truth), so counting stays cheap and a part stays under the vendor's cap.
  const counts = await countTokensEach(texts, (text) => text.length <= TOKENIZE_LIMIT_CHARS);
  return splitEmbeddingBatch(counts, {
    maxInputs,
    maxTokens: Math.floor(adapter.maxTokensPerCall / TOKENIZER_MARGIN),
  });
}

async function embedOnRoute(
  route: ResolvedRoute,
  texts: string[],
  dimensions: number | undefined,
  context: OperationContext,
): Promise<RouteOutcome> {
  const adapter = embeddingAdapter(context, route);
  const parts = await planParts(texts, adapter, context.model.capabilities?.max_inputs_per_call);
  const results = await runEmbeddingBatch(
    parts,
    (part, signal) =>
      adapter.doEmbed({
        upstreamModel: route.upstreamModel,
        inputs: texts.slice(part.start, part.end),
        ...(dimensions === undefined ? {} : { dimensions }),
        abortSignal: signal,
      }),
    {
      concurrency: EMBEDDING_CONCURRENCY,
      maxAttempts: EMBEDDING_ATTEMPTS,
      backoffMs: defaultBackoffMs,
      signal: context.signal,
    },
  );
  const lengths = new Set(results.flatMap((result) => result.embeddings.map((v) => v.length)));
  const [length] = lengths;
  // Vectors of one request are all of one size, and at least the size asked for (a longer one
  // is truncated below); anything else cannot be used by the client, and is not billed.
  if (lengths.size > 1 || (dimensions !== undefined && length !== undefined && length < dimensions))
    throw new UpstreamError({
      kind: "protocol",
      message: `Upstream answered vectors of ${[...lengths].join(", ")} dimensions${
        dimensions === undefined ? "" : ` for ${dimensions}`
      }.`,
    });
  return { route, parts, results };
}

/**
 * Tokens of every part: the upstream's count, else the gateway's exact count of its texts. A
 * count of zero for texts that are not empty is no count: the vectors were delivered, and are
 * billed.
 */
async function sumTokens(
  texts: string[],
  { parts, results }: RouteOutcome,
): Promise<{ total: number; estimated: boolean }> {
  let total = 0;
  let estimated = false;
  for (const part of parts) {
    const reported = results[part.index]?.tokens;
    const empty = () => texts.slice(part.start, part.end).every((text) => text.length === 0);
    if (reported !== undefined && (reported > 0 || empty())) {
      total += reported;
      continue;
    }
    estimated = true;
    for (const count of await countTokensEach(texts.slice(part.start, part.end), () => true))
      total += count;
  }
  return { total, estimated };
}

export async function runEmbeddings(
  body: EmbeddingRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const texts = inputTexts(body.input);
  const dimensions = body.dimensions ?? context.model.capabilities?.default_dimensions;
  const format = body.encoding_format ?? "float";
  const outcome = await attemptRoutes(
    context.model,
    (route) => embedOnRoute(route, texts, dimensions, context),
    logAttempts(context),
    context.services.routeHealth,
  );

  const warnings: CallWarning[] = [
    ...droppedFieldWarnings(undeclaredFields(body, EmbeddingRequest)),
    ...outcome.results.flatMap((result) => result.warnings),
  ];
  const vectors = outcome.results.flatMap((result) => result.embeddings);
  if (dimensions !== undefined && vectors.some((vector) => vector.length > dimensions)) {
    warnings.push({
      type: "compatibility",
      setting: "dimensions",
      details: `the upstream ignored it; vectors were truncated to ${dimensions} by the gateway`,
    });
  }
  const { total, estimated } = await sumTokens(texts, outcome);
  const usage = embeddingTokenUsage(total, estimated ? "estimated" : "upstream", {
    parts: outcome.parts.length,
    tokens: outcome.results.map((result) => result.tokens ?? null),
  });
  const first = outcome.results[0];
  const servedBy = first?.servedBy ?? outcome.route.upstreamModel;
  return {
    kind: "json",
    body: {
      object: "list",
      data: vectors.map((vector, index) => ({
        object: "embedding",
        index,
        embedding: encodeEmbedding(fitDimensions(vector, dimensions), format),
      })),
      model: context.model.id,
      usage: { prompt_tokens: total, total_tokens: total },
    },
    usage: { tokens: usage },
    settleDetails: first?.upstreamRequestId ? { upstreamRequestId: first.upstreamRequestId } : {},
    headers: {
      "x-switchyard-upstream-model": servedBy,
      "x-switchyard-batch-parts": String(outcome.parts.length),
    },
    warnings,
  };
}
