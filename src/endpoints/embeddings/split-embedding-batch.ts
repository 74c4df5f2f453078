/**
 * @module endpoints/embeddings/split-embedding-batch
 * Splits a batch of inputs into contiguous parts that respect one upstream call's limits
 * (inputs per call, and tokens per call when the vendor caps them). Pure: the caller supplies
 * each input's token count. Parts keep input order, so concatenating their vectors gives the
 * vectors of the whole batch in `index` order.
 */

export interface BatchLimits {
  /** Inputs one call may carry (at least 1). */
  maxInputs: number;
  /** Tokens one call may carry; undefined when the vendor has no such cap. */
  maxTokens?: number;
}

export interface BatchPart {
  /** Position of the part, from 0. */
  index: number;
  /** First input of the part. */
  start: number;
  /** One past the last input of the part. */
  end: number;
  /** Sum of the token counts of the part's inputs. */
  tokens: number;
}

/**
 * Greedy, in order: an input joins the current part unless that would exceed a limit. An input
 * that alone exceeds `maxTokens` gets a part of its own (the vendor truncates or rejects it).
 */
export function splitEmbeddingBatch(
  tokenCounts: readonly number[],
  limits: BatchLimits,
): BatchPart[] {
  const maxInputs = Math.max(1, Math.floor(limits.maxInputs));
  const maxTokens = limits.maxTokens ?? Number.POSITIVE_INFINITY;
  const parts: BatchPart[] = [];
  let start = 0;
  let tokens = 0;
  tokenCounts.forEach((count, position) => {
    const size = position - start;
    if (size > 0 && (size >= maxInputs || tokens + count > maxTokens)) {
      parts.push({ index: parts.length, start, end: position, tokens });
      start = position;
      tokens = 0;
    }
    tokens += count;
  });
  if (tokenCounts.length > start)
    parts.push({ index: parts.length, start, end: tokenCounts.length, tokens });
  return parts;
}
