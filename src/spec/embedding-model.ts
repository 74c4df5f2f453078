/**
 * @module spec/embedding-model
 * The embedding capability. An adapter embeds one upstream call's worth of inputs; the endpoint
 * splits large batches by the adapter's declared limits and reassembles them in order.
 */
import type { CallWarning } from "./warning.ts";

export interface EmbeddingCallOptions {
  upstreamModel: string;
  /** At most `maxInputsPerCall` inputs. */
  inputs: string[];
  /** Output size; the adapter maps it to the vendor's own parameter name. */
  dimensions?: number;
  abortSignal?: AbortSignal;
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
