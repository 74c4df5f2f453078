/**
 * @module http/json-depth
 * How deeply a JSON text nests, measured without parsing it and without recursion: one pass over
 * the text that counts `{` and `[` outside strings. Strings are skipped with `indexOf` (a closing
 * quote counts when an even number of backslashes precedes it), so the pass is linear in the
 * length of the text whatever it contains. The body parser refuses a text nested deeper than
 * `server.max_json_depth` before `JSON.parse` and everything after it (validation, conversion,
 * `JSON.stringify`) can recurse over it.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** The index of the quote that closes the string opened at `open`, or -1 if none does. */
function closingQuote(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

/**
 * True when the text opens more than `limit` objects or arrays inside one another. A text that
 * is not valid JSON gets an answer too (brackets are counted as they come); `JSON.parse` refuses
 * it afterwards if it is still within the limit.
 */
export function exceedsJsonDepth(text: string, limit: number): boolean {
  let depth = 0;
  const length = text.length;
  for (let at = 0; at < length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const close = closingQuote(text, at);
      if (close === -1) return false;
      at = close;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}
