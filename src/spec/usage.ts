/**
 * @module spec/usage
 * Normalized usage reported by every adapter. Billing prices these numbers; the vendor's raw
 * usage object is kept beside them for audit.
 */

/** Token usage of a language-model call. `input.total` includes cached reads and cache writes. */
export interface TokenUsage {
  input: {
    /** All prompt tokens, cached or not. */
    total: number;
    /** Prompt tokens read from the vendor's prompt cache. */
    cacheRead: number;
    /** Prompt tokens written into the vendor's prompt cache. */
    cacheWrite: number;
    /**
     * Of `cacheWrite`, the tokens written for a long lifetime (Anthropic's 1-hour cache), which
     * the vendor bills at a higher rate. Absent: none.
     */
    cacheWriteLong?: number;
  };
  output: {
    /** All generated tokens, reasoning included. */
    total: number;
    /** Generated tokens spent on hidden reasoning. */
    reasoning: number;
  };
  /** Where the numbers came from: the upstream's report, or the gateway's own count. */
  source: "upstream" | "estimated";
  /** The vendor's usage object as received. */
  raw?: unknown;
}

/** Units of a non-token request (images, video seconds, speech characters). */
export interface MediaUsage {
  images?: { count: number; size?: string; quality?: string };
  videoSeconds?: { seconds: number; resolution: string };
  characters?: number;
  source: "upstream" | "estimated";
  raw?: unknown;
}

export type Usage = { tokens?: TokenUsage; media?: MediaUsage };

export function emptyTokenUsage(source: TokenUsage["source"] = "upstream"): TokenUsage {
  return {
    input: { total: 0, cacheRead: 0, cacheWrite: 0 },
    output: { total: 0, reasoning: 0 },
    source,
  };
}
