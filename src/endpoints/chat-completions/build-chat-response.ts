/**
 * @module endpoints/chat-completions/build-chat-response
 * Builds the OpenAI chat completion body and stream chunks from normalized results: one choice,
 * or every choice when more were asked for (`n`).
 */
import type { ChatChoice, ChatFinishReason, ChatResult, TokenUsage } from "../../spec/index.ts";

export function toOpenAIUsage(usage: TokenUsage) {
  return {
    prompt_tokens: usage.input.total,
    completion_tokens: usage.output.total,
    total_tokens: usage.input.total + usage.output.total,
    prompt_tokens_details: { cached_tokens: usage.input.cacheRead },
    completion_tokens_details: { reasoning_tokens: usage.output.reasoning },
  };
}

export function toOpenAIFinishReason(reason: ChatFinishReason): string {
  return reason === "error" || reason === "other" ? "stop" : reason;
}

export function buildChatCompletion(input: {
  id: string;
  model: string;
  created: number;
  result: ChatResult;
  usage: TokenUsage;
  costMicros: number;
}) {
  const { result } = input;
  return {
    id: input.id,
    object: "chat.completion",
    created: input.created,
    model: input.model,
    choices: (result.choices ?? [result]).map(toOpenAIChoice),
    usage: { ...toOpenAIUsage(input.usage), cost_micros: input.costMicros },
  };
}

function toOpenAIChoice(choice: ChatChoice, index: number) {
  return {
    index,
    message: {
      role: "assistant",
      content: choice.text,
      ...(choice.reasoning ? { reasoning_content: choice.reasoning } : {}),
      ...(choice.toolCalls.length
        ? {
            tool_calls: choice.toolCalls.map((call) => ({
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: call.arguments },
            })),
          }
        : {}),
    },
    logprobs: null,
    finish_reason: toOpenAIFinishReason(choice.finishReason),
  };
}
