/**
 * @module http/json-shape
 * How deeply a JSON text nests and how many values it holds, measured without parsing it and
 * without recursion: one pass over the text that counts `{`, `[` and `,` outside strings. Strings are skipped with `indexOf` (a closing
 * quote counts when an even number of backslashes precedes it), so the pass is linear in the
 * length of the text whatever it contains. The body parser refuses a text nested deeper than
 * `server.max_json_depth` before `JSON.parse` and everything after it (validation, conversion,
 * `JSON.stringify`) can recurse over it, and a text of more than `server.max_json_values` values
 * (a 10 MiB array of a million one-letter strings) before parsing it ties up the event loop.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** What is wrong with a JSON text's shape, found before it is parsed. */
export type JsonShapeProblem = "too_deep" | "too_many_values";

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
 * The first limit the text breaks: more than `maxDepth` objects or arrays inside one another, or
 * more than `maxValues` values (counted as separators and containers, so an array of n elements
 * counts n). A text that is not valid JSON gets an answer too (brackets are counted as they
 * come); `JSON.parse` refuses it afterwards if it is still within the limits.
 */
export function jsonShapeProblem(
  text: string,
  limits: { maxDepth: number; maxValues: number },
): JsonShapeProblem | undefined {
  let depth = 0;
  let values = 1;
  const length = text.length;
  for (let at = 0; at < length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const close = closingQuote(text, at);
      if (close === -1) return undefined;
      at = close;
    } else if (code === COMMA) {
      values += 1;
      if (values > limits.maxValues) return "too_many_values";
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      values += 1;
      if (depth > limits.maxDepth) return "too_deep";
      if (values > limits.maxValues) return "too_many_values";
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return undefined;
}
