/**
 * @module endpoints/chat-completions/translated-stream
 * A chat stream whose upstream speaks another protocol (Anthropic, Gemini) or whose adapter
 * reads parts: the typed parts become OpenAI chunks, one choice per `n`, and what was delivered
 * is counted as it goes, so an abort or a break is charged for it. The end is the gateway's own:
 * the finish chunks, the usage chunk with the cost when asked for, and `[DONE]`.
 *
 * The frames come from a generator function made once, which takes the request's facts as
 * arguments: V8 gives each generator function it creates a map of its own in the old
 * generation, which would keep one made per request, and all it closes over, until the next full
 * collection (docs/performance.md).
 */
import { atLeastDelivered, completedUsage, DeliveredText } from "../../billing/index.ts";
import type { OperationContext, OperationResult, StreamFrame } from "../../core/operation.ts";
import type {
  CallWarning,
  ChatFinishReason,
  ChatStreamPart,
  TokenUsage,
} from "../../spec/index.ts";
import { toOpenAIFinishReason, toOpenAIUsage } from "./build-chat-response.ts";
import { textChunkWriter } from "./chunk-json.ts";
import { upstreamErrorFrame } from "./passthrough-stream.ts";

export interface TranslatedStreamInput {
  parts: AsyncIterable<ChatStreamPart>;
  context: OperationContext;
  id: string;
  created: number;
  includeUsage: boolean;
  /** The choices asked for (`n`). */
  choiceCount: number;
  warnings: CallWarning[];
  /** The gateway's own count for a delivered output (the prompt is counted there too). */
  ownCount(delivered: DeliveredText): Promise<TokenUsage>;
}

/** What a translated stream keeps while it runs. */
interface TranslatedRun {
  usage: TokenUsage | undefined;
  /** The upstream broke mid-stream (not the client going away). */
  interrupted: boolean;
  delivered: DeliveredText;
  /** A chunk of `delta` for `choice`, with a finish reason at the end. */
  chunk(
    delta: Record<string, unknown>,
    choice?: number,
    finishReason?: string | null,
  ): Record<string, unknown>;
  textChunk: ReturnType<typeof textChunkWriter>;
}

async function* translatedFrames(
  input: TranslatedStreamInput,
  run: TranslatedRun,
): AsyncGenerator<StreamFrame> {
  const { context, choiceCount, includeUsage, id, created } = input;
  const { delivered, chunk, textChunk } = run;
  for (let choice = 0; choice < choiceCount; choice++)
    yield { data: chunk({ role: "assistant", content: "" }, choice) };
  let finishReasons: ChatFinishReason[] = ["stop"];
  try {
    for await (const part of input.parts) {
      switch (part.type) {
        case "text-delta":
          delivered.add(part.delta);
          yield { data: undefined, json: textChunk("content", part.delta, part.choice ?? 0) };
          break;
        case "reasoning-delta":
          delivered.add(part.delta, true);
          yield {
            data: undefined,
            json: textChunk("reasoning_content", part.delta, part.choice ?? 0),
          };
          break;
        case "tool-call-start":
          yield {
            data: chunk(
              {
                tool_calls: [
                  {
                    index: part.index,
                    id: part.id,
                    type: "function",
                    function: { name: part.name, arguments: "" },
                  },
                ],
              },
              part.choice,
            ),
          };
          break;
        case "tool-call-delta":
          delivered.add(part.argumentsDelta);
          yield {
            data: chunk(
              {
                tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }],
              },
              part.choice,
            ),
          };
          break;
        case "finish":
          finishReasons = part.finishReasons ?? [part.finishReason];
          run.usage = part.usage;
          break;
      }
    }
  } catch (error) {
    run.interrupted = !context.signal.aborted;
    yield upstreamErrorFrame(error);
    return;
  }
  for (let choice = 0; choice < choiceCount; choice++) {
    const reason = finishReasons[choice] ?? finishReasons[0] ?? "stop";
    yield { data: chunk({}, choice, toOpenAIFinishReason(reason)) };
  }
  const usage = await completedUsage(run.usage, () => input.ownCount(delivered));
  run.usage = usage;
  const { costMicros } = await context.settle({ tokens: usage });
  if (includeUsage) {
    yield {
      data: {
        id,
        object: "chat.completion.chunk",
        created,
        model: context.model.id,
        choices: [],
        usage: { ...toOpenAIUsage(usage), cost_micros: costMicros },
      },
    };
  }
  yield { data: "[DONE]" };
}

export function translatedStream(input: TranslatedStreamInput): OperationResult {
  const { context, id, created, includeUsage } = input;
  const run: TranslatedRun = {
    usage: undefined,
    interrupted: false,
    delivered: new DeliveredText(),
    chunk: (delta, choice = 0, finishReason = null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model: context.model.id,
      choices: [{ index: choice, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    }),
    textChunk: textChunkWriter({ id, created, model: context.model.id, includeUsage }),
  };
  return {
    kind: "stream",
    frames: translatedFrames(input, run),
    warnings: input.warnings,
    // Read on abort, on an upstream break and for checkpoints (a completed stream has settled
    // already): what was delivered, and nothing at all when the upstream broke before any output.
    usage: async () => {
      const own = await input.ownCount(run.delivered);
      if (run.interrupted && own.output.total === 0 && !run.usage) return undefined;
      return { tokens: atLeastDelivered(run.usage, own) };
    },
    interrupted: () => run.interrupted,
  };
}
