/**
 * @module sandbox/context-window
 * The vendors refuse a prompt longer than the model's context window, so the sandbox does too
 * (with each vendor's error, see the routes). Windows come from the model name, as the vendors
 * publish them; the prompt's length is the larger of the sandbox's own count (one token per
 * word) and one token per four characters, a floor every vendor tokenizer reaches, so a prompt
 * the vendor would take is never refused here.
 */

/** Context windows by model-name prefix, longest prefix first. */
const WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["gpt-5", 400_000],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4", 200_000],
  ["claude-", 200_000],
  ["gemini-", 1_048_576],
  ["deepseek-", 128_000],
  ["qwen", 131_072],
  ["grok-", 256_000],
];

/** The window of any other model of an OpenAI-compatible vendor. */
const DEFAULT_WINDOW = 128_000;

export function contextWindowOf(model: string): number {
  const name = model.toLowerCase().replace(/^models\//, "");
  let best: readonly [string, number] | undefined;
  for (const entry of WINDOWS)
    if (name.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best?.[1] ?? DEFAULT_WINDOW;
}

/**
 * The prompt's length when it exceeds the model's window, else undefined. `countedTokens` is the
 * sandbox's own count of the prompt (what its usage reports).
 */
export function promptOverWindow(
  model: string,
  texts: readonly string[],
  countedTokens: number,
): { tokens: number; window: number } | undefined {
  let characters = 0;
  for (const text of texts) characters += text.length;
  const tokens = Math.max(countedTokens, Math.ceil(characters / 4));
  const window = contextWindowOf(model);
  return tokens > window ? { tokens, window } : undefined;
}
