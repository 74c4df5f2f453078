/**
 * @module spec/embedding-model
 * The embedding capability. An adapter embeds one upstream call's worth of inputs; the endpoint
 * splits large batches by the adapter's declared limits and reassembles them in order.
 */
import type { CallSignal } from "./call-signal.ts";
import type { CallWarning } from "./warning.ts";

export interface EmbeddingCallOptions {
  upstreamModel: string;
  /** At most `maxInputsPerCall` inputs. */
  inputs: string[];
  /** Output size; the adapter maps it to the vendor's own parameter name. */
  dimensions?: number;
  abortSignal?: CallSignal;
}

export interface EmbeddingResult {
  /** One float vector per input, in input order. */
  embeddings: number[][];
  /** Tokens the upstream reported; undefined when it reports none. */
  tokens: number | undefined;
  upstreamRequestId?: string;
  /** The upstream model that actually served the call (e.g. a stand-in for a retired model). */
  servedBy?: string;
  warnings: CallWarning[];
}

export interface EmbeddingModel {
  readonly specificationVersion: "switchyard-embedding-1";
  readonly provider: string;
  /** Inputs one upstream call may carry. */
  readonly maxInputsPerCall: number;
  /** Tokens one upstream call may carry, when the vendor limits it. */
  readonly maxTokensPerCall?: number;
  doEmbed(options: EmbeddingCallOptions): Promise<EmbeddingResult>;
}

/**
 * The Euclidean length of a vector, computed on the vector scaled by its largest component so
 * that large finite values (1e200, whose square is Infinity) and tiny ones (1e-200, whose square
 * is 0) do not overflow or vanish.
 */
export function vectorLength(vector: readonly number[]): number {
  let largest = 0;
  for (const value of vector) largest = Math.max(largest, Math.abs(value));
  if (largest === 0 || !Number.isFinite(largest)) return largest;
  let sum = 0;
  for (const value of vector) sum += (value / largest) ** 2;
  return largest * Math.sqrt(sum);
}

/** The vector scaled to unit length (a zero vector stays as it is). */
export function toUnitLength(vector: readonly number[]): number[] {
  let largest = 0;
  for (const value of vector) largest = Math.max(largest, Math.abs(value));
  if (largest === 0 || !Number.isFinite(largest)) return [...vector];
  // Divided by the largest component first, so the length itself cannot overflow.
  const scaled = vector.map((value) => value / largest);
  const length = vectorLength(scaled);
  return scaled.map((value) => value / length);
}
