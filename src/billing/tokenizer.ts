/**
 * @module billing/tokenizer
 * Token counting with a real BPE tokenizer (`o200k_base` through js-tiktoken), loaded once in the
 * background at start-up. Used for billing holds and for usage the upstream did not report.
 * Counting is CPU work, so for holds very long and very short texts are bounded by their UTF-8
 * byte length instead (every BPE token is at least one byte, so the bound is never below the
 * truth); usage the upstream did not report is always counted exactly.
 */
import type { Tiktoken } from "js-tiktoken/lite";

/** Texts longer than this are bounded by bytes rather than tokenized on the request path. */
export const TOKENIZE_LIMIT_CHARS = 16_000;
/** Texts shorter than this are bounded by bytes too: the bound costs at most a few hundred tokens. */
export const TOKENIZE_MIN_CHARS = 512;

let encoder: Promise<Tiktoken> | undefined;

function loadEncoder(): Promise<Tiktoken> {
  encoder ??= (async () => {
    const [{ Tiktoken: TiktokenClass }, ranks] = await Promise.all([
      import("js-tiktoken/lite"),
      import("js-tiktoken/ranks/o200k_base"),
    ]);
    return new TiktokenClass(ranks.default);
  })();
  return encoder;
}

/** Loads the tokenizer now (it takes about a second), so no request waits for it. */
export async function warmTokenizer(): Promise<void> {
  await loadEncoder();
}

/** Tokens of `text`: exact (o200k_base) up to the limit, the byte-length bound above it. */
export async function countTokens(
  text: string,
  options: { exact?: boolean } = {},
): Promise<number> {
  if (text.length === 0) return 0;
  if (!options.exact && (text.length > TOKENIZE_LIMIT_CHARS || text.length < TOKENIZE_MIN_CHARS)) {
    return Buffer.byteLength(text, "utf8");
  }
  const tokenizer = await loadEncoder();
  return tokenizer.encode(text, "all").length;
}
