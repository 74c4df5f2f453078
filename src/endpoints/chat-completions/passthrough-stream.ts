/**
 * @module endpoints/chat-completions/passthrough-stream
 * A chat stream whose upstream speaks OpenAI chat too: the upstream's chunks reach the client as
 * the adapter passed them (renamed, not rebuilt), and only the end is the gateway's own — the
 * usage chunk with the cost, when asked for, and `[DONE]`. What was delivered is read from the
 * chunks only when it is needed (a checkpoint, an abort, a break, an upstream that reports no
 * usage), so a stream that ends normally is never parsed twice.
 */
import { atLeastDelivered, DeliveredText } from "../../billing/index.ts";
import {
  framesTogether,
  type OperationContext,
  type OperationResult,
  type StreamFrame,
} from "../../core/operation.ts";
import type { CallWarning, ChatChunkStreamPart, TokenUsage } from "../../spec/index.ts";
import { toOpenAIUsage } from "./build-chat-response.ts";

interface DeltaChunk {
  choices?: Array<{
    delta?: {
      content?: unknown;
      reasoning_content?: unknown;
      reasoning?: unknown;
      refusal?: unknown;
      tool_calls?: Array<{ function?: { arguments?: unknown } }>;
    };
  }>;
}

/**
 * Adds the text a passed-through chunk delivered: content, a refusal, reasoning (as
 * `reasoning_content`, or `reasoning` as Groq and others write it) and tool arguments.
 */
function addDelivered(json: string, delivered: DeliveredText): void {
  let chunk: DeltaChunk;
  try {
    chunk = JSON.parse(json) as DeltaChunk;
  } catch {
    return;
  }
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta ?? {};
    if (typeof delta.reasoning_content === "string") delivered.add(delta.reasoning_content, true);
    if (typeof delta.reasoning === "string") delivered.add(delta.reasoning, true);
    if (typeof delta.content === "string") delivered.add(delta.content);
    if (typeof delta.refusal === "string") delivered.add(delta.refusal);
    for (const call of delta.tool_calls ?? [])
      if (typeof call.function?.arguments === "string") delivered.add(call.function.arguments);
  }
}

export function passedThroughStream(input: {
  chunks: AsyncIterable<ChatChunkStreamPart>;
  context: OperationContext;
  id: string;
  created: number;
  includeUsage: boolean;
  warnings: CallWarning[];
  /** The gateway's own count for a delivered output (the prompt is counted there too). */
  ownCount(delivered: DeliveredText): Promise<TokenUsage>;
}): OperationResult {
  const { context } = input;
  const state = { usage: undefined as TokenUsage | undefined, interrupted: false };
  const delivered = new DeliveredText();
  /** Chunks sent and not yet read for the delivered count. */
  let unread: string[] = [];
  const ownCount = () => {
    for (const json of unread) addDelivered(json, delivered);
    unread = [];
    return input.ownCount(delivered);
  };

  async function* frames(): AsyncGenerator<StreamFrame> {
    try {
      for await (const part of input.chunks) {
        if (part.type === "finish") {
          state.usage = part.usage;
          continue;
        }
        const batch: StreamFrame[] = [];
        for (const json of part.json) {
          unread.push(json);
          batch.push({ data: undefined, json });
        }
        yield framesTogether(batch);
      }
    } catch (error) {
      state.interrupted = !context.signal.aborted;
      const message = error instanceof Error ? error.message : "Upstream stream failed.";
      yield { data: { error: { message, type: "upstream_error", code: "upstream_error" } } };
      return;
    }
    const usage = state.usage ?? (await ownCount());
    state.usage = usage;
    const { costMicros } = await context.settle({ tokens: usage });
    if (input.includeUsage) {
      yield {
        data: {
          id: input.id,
          object: "chat.completion.chunk",
          created: input.created,
          model: context.model.id,
          choices: [],
          usage: { ...toOpenAIUsage(usage), cost_micros: costMicros },
        },
      };
    }
    yield { data: "[DONE]" };
  }

  return {
    kind: "stream",
    frames: frames(),
    warnings: input.warnings,
    usage: async () => {
      const own = await ownCount();
      if (state.interrupted && own.output.total === 0 && !state.usage) return undefined;
      return { tokens: atLeastDelivered(state.usage, own) };
    },
    interrupted: () => state.interrupted,
  };
}
