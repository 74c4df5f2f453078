/**
 * @module billing/delivered-usage
 * Every delivered unit is billed: a stream that the client aborts, or that the upstream breaks,
 * is charged the larger of the upstream's reported usage and the gateway's own count of what it
 * delivered. `DeliveredText` counts delivered output incrementally (each piece is tokenized once,
 * when a count is asked for), so checkpoints of a long stream cost O(new text), not O(all text).
 */
import type { TokenUsage } from "../spec/index.ts";
import { countTokens } from "./tokenizer.ts";

/** Text tokenized piece by piece, each piece once, when a count is asked for. */
class TokenTally {
  #pending: string[] = [];
  #tokens = 0;

  add(text: string): void {
    this.#pending.push(text);
  }

  async tokens(): Promise<number> {
    if (this.#pending.length > 0) {
      const text = this.#pending.join("");
      this.#pending = [];
      this.#tokens += await countTokens(text, { exact: true });
    }
    return this.#tokens;
  }
}

export class DeliveredText {
  readonly #answer = new TokenTally();
  readonly #reasoning = new TokenTally();
  #characters = 0;

  /** Adds delivered output; `reasoning` marks it as reasoning (priced at the reasoning price). */
  add(text: string, reasoning = false): void {
    if (text.length === 0) return;
    (reasoning ? this.#reasoning : this.#answer).add(text);
    this.#characters += text.length;
  }

  get characters(): number {
    return this.#characters;
  }

  /** Tokens delivered so far, reasoning included (o200k_base, counted piece by piece). */
  async tokens(): Promise<number> {
    return (await this.#answer.tokens()) + (await this.#reasoning.tokens());
  }

  /** The reasoning tokens among them. */
  reasoningTokens(): Promise<number> {
    return this.#reasoning.tokens();
  }

  /** The gateway's own output count: every delivered token, and which were reasoning. */
  async output(): Promise<{ total: number; reasoning: number }> {
    const reasoning = await this.#reasoning.tokens();
    return { total: (await this.#answer.tokens()) + reasoning, reasoning };
  }
}

/**
 * What an answer that was delivered whole (a stream that ran to its end, a JSON answer) is
 * charged: the upstream's report, unless it reports no answer output (none reported; zero, as
 * an Anthropic stream without a `message_delta` usage leaves it; or only reasoning, as a Gemini
 * report without `candidatesTokenCount` reads) for an answer that has some. Then the gateway's
 * own count of the answer is added to the reported reasoning, and each field is the larger of
 * that and the report. The own count is made only then: an answer whose vendor reports its
 * output is not read again.
 */
export async function completedUsage(
  reported: TokenUsage | undefined,
  ownCount: () => Promise<TokenUsage>,
): Promise<TokenUsage> {
  if (reported && answerTokens(reported) > 0) return reported;
  const own = await ownCount();
  // An answer with no visible output (empty, or reasoning only) as reported: the vendor's
  // counts stand (its input is exact, and reasoning is not always delivered as text).
  if (reported && answerTokens(own) === 0) return reported;
  if (!reported) return own;
  const reasoning = Math.max(reported.output.reasoning, own.output.reasoning);
  return atLeastDelivered(reported, {
    ...own,
    output: { total: reasoning + answerTokens(own), reasoning },
  });
}

/** Output tokens that are the answer itself, not reasoning. */
function answerTokens(usage: TokenUsage): number {
  return Math.max(0, usage.output.total - usage.output.reasoning);
}

/** Field by field, the larger of the upstream's report and the gateway's own count. */
export function atLeastDelivered(
  reported: TokenUsage | undefined,
  delivered: TokenUsage,
): TokenUsage {
  if (!reported) return delivered;
  const input = Math.max(reported.input.total, delivered.input.total);
  const output = Math.max(reported.output.total, delivered.output.total);
  const upstreamCovers =
    reported.input.total >= delivered.input.total &&
    reported.output.total >= delivered.output.total;
  return {
    input: {
      total: input,
      cacheRead: Math.min(reported.input.cacheRead, input),
      cacheWrite: Math.min(reported.input.cacheWrite, input),
    },
    output: {
      total: output,
      reasoning: Math.min(Math.max(reported.output.reasoning, delivered.output.reasoning), output),
    },
    source: upstreamCovers ? reported.source : "estimated",
    ...(reported.raw === undefined ? {} : { raw: reported.raw }),
  };
}

/**
 * The gateway's own count of a stream, for when the upstream's report is missing or short: its
 * prompt, counted once on first need (`countPrompt`), and the output delivered so far.
 */
export function ownStreamCount(
  countPrompt: () => Promise<number>,
  delivered: DeliveredText,
): () => Promise<TokenUsage> {
  let promptTokens: Promise<number> | undefined;
  return async () => {
    promptTokens ??= countPrompt();
    return {
      input: { total: await promptTokens, cacheRead: 0, cacheWrite: 0 },
      output: await delivered.output(),
      source: "estimated",
    };
  };
}
