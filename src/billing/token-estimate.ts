/**
 * @module billing/token-estimate
 * Counts tokens when an upstream reports none. A deliberately generous approximation (one token
 * per 3 characters, plus per-message overhead), so estimates err above the truth.
 */

export function estimateTextTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 3);
}

/** Tokens of a whole prompt: every text fragment plus a small overhead per message. */
export function estimatePromptTokens(texts: readonly string[], messageCount: number): number {
  return texts.reduce((sum, text) => sum + estimateTextTokens(text), 0) + messageCount * 4 + 3;
}
