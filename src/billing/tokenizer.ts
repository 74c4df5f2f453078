/**
 * @module billing/tokenizer
 * Token counting with a real BPE tokenizer (`o200k_base` through js-tiktoken), loaded once in the
 * background at start-up. Used for billing holds and for usage the upstream did not report.
 * Counting is CPU work, so for holds very long and very short texts are bounded by their UTF-8
 * byte length instead (every BPE token is at least one byte, so the bound is never below the
 * truth); usage the upstream did not report is always counted exactly.
 *
 * The BPE merge takes time quadratic in the length of one pre-tokenized piece, and a piece is a
 * whole run of letters, of punctuation or of spaces: 16,000 times `a` took 26 s, all of it on
 * the event loop. So runs longer than `MAX_RUN` are counted in slices of that length (a cut costs
 * at most a token), and a long text is counted a slice at a time, a turn of the event loop
 * apart, so no count holds the loop for long whatever the client sends.
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
  if (text.length <= SLICE_CHARS) return countSlice(tokenizer, text);
  let total = 0;
  for (let from = 0; from < text.length; ) {
    const to = sliceEnd(text, from);
    total += countSlice(tokenizer, text.slice(from, to));
    from = to;
    if (from < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}

/**
 * Tokens of each of `texts`, as `countTokens` counts them (`exact` per text), with a turn of the
 * event loop every `SLICE_CHARS` characters across texts: a batch of thousands of short texts
 * (an embeddings request) is as long as one long text, and must not hold the loop either.
 */
export async function countTokensEach(
  texts: readonly string[],
  exact: (text: string) => boolean,
): Promise<number[]> {
  const counts: number[] = [];
  let sinceTurn = 0;
  for (const text of texts) {
    if (sinceTurn >= SLICE_CHARS) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    counts.push(await countTokens(text, { exact: exact(text) }));
    sinceTurn += text.length;
  }
  return counts;
}

/** The longest run of one kind (letters, punctuation, spaces) the BPE merge is given at once. */
const MAX_RUN = 16;
/** Runs of one kind longer than `MAX_RUN` (o200k's pre-tokenizer keeps each as one piece). */
const LONG_RUN = /[\p{L}\p{M}]{17,}|[^\s\p{L}\p{N}]{17,}|\s{17,}/gu;
/** Characters counted in one event-loop turn (tens of milliseconds at most, CJK text the slowest). */
const SLICE_CHARS = 4096;

/** Where the slice from `from` ends: at a space near `SLICE_CHARS` on, so few words are cut. */
function sliceEnd(text: string, from: number): number {
  const end = from + SLICE_CHARS;
  if (end >= text.length) return text.length;
  const space = text.lastIndexOf(" ", end);
  return space > from + SLICE_CHARS / 2 ? space : end;
}

/** Tokens of one slice, its long runs counted `MAX_RUN` characters at a time. */
function countSlice(tokenizer: Tiktoken, text: string): number {
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const at = run.index;
    if (at > from) total += tokenizer.encode(text.slice(from, at), "all").length;
    for (let cut = 0; cut < run[0].length; cut += MAX_RUN)
      total += tokenizer.encode(run[0].slice(cut, cut + MAX_RUN), "all").length;
    from = at + run[0].length;
  }
  if (from === 0) return tokenizer.encode(text, "all").length;
  if (from < text.length) total += tokenizer.encode(text.slice(from), "all").length;
  return total;
}
