/**
 * @module endpoints/chat-completions/operation
 * The transport-free chat completion: picks a route, calls the adapter (with fallback before the
 * first byte), and returns an OpenAI-shaped body or a stream of OpenAI chunks (one choice per
 * `n`, each chunk naming its choice's index). MCP reuses it.
 */
import { completedUsage, countTokens, type DeliveredText } from "../../billing/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import { droppedFieldWarnings } from "../../core/dropped-fields.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import type {
  ChatCallOptions,
  ChatChoice,
  ChatChunkStreamPart,
  ChatStreamPart,
  TokenUsage,
} from "../../spec/index.ts";
import { newId } from "../../store/index.ts";
import { chatModelRules } from "../chat-model-rules.ts";
import { assertStructuredOutput, structuredOutputCheck } from "../structured-output.ts";
import { buildChatCompletion } from "./build-chat-response.ts";
import { convertChatRequest, toChatResponseFormat } from "./convert-chat-request.ts";
import { countChatPrompt } from "./count-chat-prompt.ts";
import { passedThroughStream } from "./passthrough-stream.ts";
import { splitExtraFields } from "./request-fields.ts";
import type { ChatCompletionRequest } from "./schema.ts";
import { translatedStream } from "./translated-stream.ts";

/** What a streaming route answered: chunks to pass through, or parts to translate. */
type UpstreamStream =
  | { chunks: AsyncIterable<ChatChunkStreamPart> }
  | { parts: AsyncIterable<ChatStreamPart> };

/** The gateway's own count, used when the upstream reports no usage. */
export async function estimateChatUsage(
  options: ChatCallOptions,
  output: { text: string; reasoning?: string },
): Promise<TokenUsage> {
  const reasoning = output.reasoning ? await countTokens(output.reasoning, { exact: true }) : 0;
  return {
    input: { total: await countChatPrompt(options), cacheRead: 0, cacheWrite: 0 },
    output: { total: (await countTokens(output.text, { exact: true })) + reasoning, reasoning },
    source: "estimated",
  };
}

/** What the choices of an answer delivered: their text and tool calls, and their reasoning. */
export function choicesOutput(choices: readonly ChatChoice[]): { text: string; reasoning: string } {
  return {
    text: choices
      .flatMap((choice) => [
        choice.text ?? "",
        ...choice.toolCalls.flatMap((call) => [call.name, call.arguments]),
      ])
      .join("\n"),
    reasoning: choices.map((choice) => choice.reasoning ?? "").join("\n"),
  };
}

function chatModelFor(
  context: OperationContext,
  route: Parameters<Parameters<typeof attemptRoutes>[1]>[0],
) {
  return adapterFor(context.services.providers, "chatModel", route, context.model);
}

export async function runChatCompletion(
  body: ChatCompletionRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const id = `chatcmpl-${newId("").slice(1)}`;
  const created = Math.floor(context.services.now() / 1000);
  const logAttempt = logAttempts(context);
  const dropped = droppedFieldWarnings(splitExtraFields(body).dropped);
  const rules = chatModelRules(context.model);
  const optionsFor = (upstreamModel: string): ChatCallOptions => ({
    ...convertChatRequest(body, upstreamModel, rules),
    abortSignal: context.signal,
  });

  if (!body.stream) {
    const check = structuredOutputCheck(
      toChatResponseFormat(body.response_format),
      "response_format.json_schema.schema",
    );
    let options: ChatCallOptions | undefined;
    const result = await attemptRoutes(
      context.model,
      (route) => {
        options = optionsFor(route.upstreamModel);
        return chatModelFor(context, route).doGenerate(options);
      },
      logAttempt,
      context.services.routeHealth,
    );
    for (const choice of result.choices ?? [result]) assertStructuredOutput(check, choice);
    const usage = await completedUsage(result.usage, () =>
      estimateChatUsage(options!, choicesOutput(result.choices ?? [result])),
    );
    return {
      kind: "json",
      usage: { tokens: usage },
      settleDetails: { upstreamRequestId: result.upstreamRequestId },
      render: ({ costMicros }) =>
        buildChatCompletion({ id, model: context.model.id, created, result, usage, costMicros }),
      warnings: [...dropped, ...result.warnings],
    };
  }

  let options: ChatCallOptions | undefined;
  const includeUsage = body.stream_options?.include_usage === true;
  const rewrite = { id, model: context.model.id, usageNulls: includeUsage };
  const upstream = await attemptRoutes(
    context.model,
    (route): Promise<UpstreamStream> => {
      options = optionsFor(route.upstreamModel);
      const model = chatModelFor(context, route);
      // Same protocol on both sides: the upstream's chunks go through as they are.
      return model.doStreamChunks
        ? model.doStreamChunks(options, rewrite).then((chunks) => ({ chunks }))
        : model.doStream(options).then((parts) => ({ parts }));
    },
    logAttempt,
    context.services.routeHealth,
  );
  let promptTokens: Promise<number> | undefined;
  /** The gateway's own count: the prompt (counted once) and the output delivered so far. */
  const countDelivered = async (delivered: DeliveredText): Promise<TokenUsage> => {
    promptTokens ??= countChatPrompt(options!);
    return {
      input: { total: await promptTokens, cacheRead: 0, cacheWrite: 0 },
      output: await delivered.output(),
      source: "estimated",
    };
  };
  if ("chunks" in upstream) {
    return passedThroughStream({
      chunks: upstream.chunks,
      context,
      id,
      created,
      includeUsage,
      warnings: dropped,
      ownCount: countDelivered,
    });
  }
  return translatedStream({
    parts: upstream.parts,
    context,
    id,
    created,
    includeUsage,
    choiceCount: body.n ?? 1,
    warnings: dropped,
    ownCount: countDelivered,
  });
}
