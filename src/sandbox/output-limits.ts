/**
 * @module sandbox/output-limits
 * The most output tokens one request may ask of a model, as the vendors publish them, by model
 * name (longest matching prefix). A larger cap is refused with the vendor's own error (see the
 * routes); a model not listed has no limit here.
 * @see https://platform.openai.com/docs/models
 * @see https://docs.anthropic.com/en/docs/about-claude/models/overview
 * @see https://ai.google.dev/gemini-api/docs/models
 */

/** Output limits by model-name prefix; the longest matching prefix wins. */
const LIMITS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  // OpenAI
  ["gpt-3.5-turbo", 4_096],
  ["gpt-4-turbo", 4_096],
  ["gpt-4o", 16_384],
  ["gpt-4o-2024-05-13", 4_096],
  ["gpt-4.1", 32_768],
  ["o1", 100_000],
  ["o3", 100_000],
  ["o4", 100_000],
  ["gpt-5", 128_000],
  ["gpt-5-chat", 16_384],
  ["gpt-5.1-chat", 16_384],
  ["gpt-5.2-chat", 16_384],
  // Anthropic
  ["claude-3-haiku", 4_096],
  ["claude-3-5-", 8_192],
  ["claude-3-7-sonnet", 64_000],
  ["claude-sonnet-4", 64_000],
  ["claude-haiku-4", 64_000],
  ["claude-opus-4", 32_000],
  ["claude-opus-4-5", 64_000],
  ["claude-opus-4-6", 128_000],
  // Google
  ["gemini-2.0-", 8_192],
  ["gemini-2.5-", 65_536],
  ["gemini-3", 65_536],
];

export function outputLimitOf(model: string): number | undefined {
  const name = model.toLowerCase().replace(/^models\//, "");
  let best: readonly [string, number] | undefined;
  for (const entry of LIMITS)
    if (name.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best?.[1];
}
