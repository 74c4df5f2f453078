/**
 * @module sandbox/deterministic-text
 * Pure helpers that make sandbox output a function of the request: a stable string hash, a seeded
 * pseudo-random generator, word selection from a fixed list, the sandbox's token approximation
 * and deterministic hex ids.
 */

/** The fixed vocabulary filler words are drawn from. Changing it changes every sandbox reply. */
// biome-ignore format: keep the word table compact
export const WORDS: readonly string[] = [
  "amber", "anchor", "apple", "arbor", "atlas", "autumn", "badge", "beacon",
  "birch", "bloom", "breeze", "brook", "cedar", "cinder", "clover", "comet",
  "coral", "crystal", "dawn", "delta", "dune", "echo", "ember", "fable",
  "fern", "field", "flint", "frost", "garnet", "glade", "harbor", "hazel",
  "horizon", "island", "ivory", "jasper", "lagoon", "lantern", "maple", "meadow",
  "meteor", "mist", "nectar", "nova", "oak", "ocean", "opal", "orbit",
  "pebble", "pine", "prairie", "quartz", "raven", "reef", "ridge", "river",
  "saffron", "sierra", "spruce", "summit", "thistle", "tide", "valley", "willow",
];

/** 32-bit FNV-1a over the string's UTF-16 code units. Stable across runs and platforms. */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a tiny seeded generator returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` words from {@link WORDS}, chosen by the seed. */
export function pickWords(seed: number, count: number): string[] {
  const next = seededRandom(seed);
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    words.push(WORDS[Math.floor(next() * WORDS.length)] ?? "echo");
  }
  return words;
}

/** `length` lowercase hex characters chosen by the seed. */
export function hexId(seed: number, length: number): string {
  const next = seededRandom(seed);
  let out = "";
  while (out.length < length) out += Math.floor(next() * 16).toString(16);
  return out;
}

/** Whitespace-separated words of a text. */
export function splitWords(text: string): string[] {
  return text.split(/\s+/).filter((word) => word.length > 0);
}

/**
 * The sandbox's tokenizer: one token per word, each token carrying the whitespace before it
 * (like real BPE tokens such as " world"). Concatenating the tokens gives back the text without
 * trailing whitespace, so a stream of tokens has an exactly known token count. Linear in the
 * text: each word is found by `\S+` and its token starts where the previous one ended (a pattern
 * such as `\s*\S+` would backtrack over every run of whitespace, quadratic in its length).
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let from = 0;
  for (const match of text.matchAll(/\S+/g)) {
    const end = match.index + match[0].length;
    tokens.push(text.slice(from, end));
    from = end;
  }
  return tokens;
}

/** Number of sandbox tokens in a text (its whitespace-separated words). */
export function countTokens(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(/\S+/g)) count++;
  return count;
}

/** Groups tokens into fragments of `size` tokens each (the last one may be shorter). */
export function groupTokens(tokens: readonly string[], size: number): string[] {
  const fragments: string[] = [];
  for (let i = 0; i < tokens.length; i += size) fragments.push(tokens.slice(i, i + size).join(""));
  return fragments;
}
