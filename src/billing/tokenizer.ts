/**
 * @module billing/tokenizer
 * Token counting with a real BPE tokenizer (`o200k_base` through js-tiktoken), loaded once in the
 * background at start-up. Used for billing holds and for usage the upstream did not report.
 * Counting is CPU work, so very long texts are bounded by their UTF-8 byte length instead
 * (every BPE token is at least one byte, so the bound is never below the truth).
 */
import type { Tiktoken } from "js-tiktoken/lite";

/** Texts longer than this are bounded by bytes rather than tokenized on the request path. */
export const TOKENIZE_LIMIT_CHARS = 16_000;

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
  if (!options.exact && text.length > TOKENIZE_LIMIT_CHARS) return Buffer.byteLength(text, "utf8");
  const tokenizer = await loadEncoder();
  return tokenizer.encode(text, "all").length;
}
