/**
 * @module endpoints/responses/operation
 * The transport-free `POST /v1/responses` operation: the request (and the conversation it
 * continues) becomes a chat call; routes are tried in order with fallback before the first
 * byte; the answer is a Response object or the Responses event stream. A stream that the
 * client aborts or the upstream breaks is billed like a chat stream: the larger of the
 * upstream's report and the gateway's count of what it delivered. A response with `store`
 * (the default) is kept for the account once it is settled (`GET /v1/responses/{id}`,
 * `previous_response_id`).
 */
import { atLeastDelivered, countTokens, DeliveredText } from "../../billing/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import type { OperationContext, OperationResult, StreamFrame } from "../../core/operation.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import type {
  CallWarning,
  ChatCallOptions,
  ChatFinishReason,
  ChatMessage,
  ChatStreamPart,
  TokenUsage,
} from "../../spec/index.ts";
import { estimateChatUsage } from "../chat-completions/operation.ts";
import { chatModelRules } from "../chat-model-rules.ts";
import {
  buildResponsesResponse,
  finishedResponse,
  type ResponseObject,
  responseSkeleton,
  responsesId,
} from "./build-responses-response.ts";
import { convertResponsesRequest, inputItems } from "./convert-responses-request.ts";
import { ResponsesStreamWriter } from "./responses-stream-events.ts";
import type { ResponsesInputItem, ResponsesRequest } from "./schema.ts";
import { priorItems } from "./validate-responses-request.ts";

const ITEM_PREFIX = {
  message: "msg",
  function_call: "fc",
  function_call_output: "fco",
  reasoning: "rs",
  item_reference: "ref",
} as const;

/**
 * Input items as they are stored and listed (`input_items`): each with an id, messages in
 * their full form (`type`, `status`, content as parts).
 */
function storedItems(items: ResponsesInputItem[]): Record<string, unknown>[] {
  return items.map((item) => {
    const id = item.id ?? responsesId(ITEM_PREFIX[item.type ?? "message"]);
    if (item.type !== undefined && item.type !== "message") return { ...item, id };
    const content =
      typeof item.content !== "string"
        ? item.content
        : item.role === "assistant"
          ? [{ type: "output_text", text: item.content, annotations: [] }]
          : [{ type: "input_text", text: item.content }];
    return { ...item, id, type: "message", status: item.status ?? "completed", content };
  });
}

/** Keeps the response (and the items that formed its input) unless `store` is false. */
async function keep(
  body: ResponsesRequest,
  context: OperationContext,
  response: ResponseObject,
): Promise<void> {
  if (body.store === false) return;
  try {
    await context.services.store.saveResponse({
      id: response.id,
      accountId: context.accountId,
      model: response.model,
      response: response as unknown as Record<string, unknown>,
      inputItems: [
        ...(priorItems(body) as Record<string, unknown>[]),
        ...storedItems(inputItems(body)),
      ],
      createdAt: context.services.now(),
    });
  } catch (error) {
    // Charged and answered already: the client gets its answer; only reading it back fails.
    context.services.logger.error(
      { err: error, requestId: context.requestId },
      "storing the response failed",
    );
  }
}

function promptText(messages: ChatMessage[]): string {
  return messages
    .flatMap((message) => {
      const content = message.content;
      if (content === null) return [];
      if (typeof content === "string") return [content];
      return content.flatMap((part) => (part.type === "text" ? [part.text] : []));
    })
    .join("\n");
}

export async function runResponses(
  body: ResponsesRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const { services } = context;
  const prior = priorItems(body);
  const rules = chatModelRules(context.model);
  const head = {
    id: responsesId("resp"),
    createdAt: Math.floor(services.now() / 1000),
    model: context.model.id,
  };
  let options: ChatCallOptions | undefined;
  let warnings: CallWarning[] = [];
  const optionsFor = (upstreamModel: string): ChatCallOptions => {
    const converted = convertResponsesRequest(body, upstreamModel, { prior, rules });
    warnings = converted.warnings;
    options = { ...converted.options, abortSignal: context.signal };
    return options;
  };
  const chatModel = (route: Parameters<Parameters<typeof attemptRoutes>[1]>[0]) =>
    adapterFor(services.providers, "chatModel", route, context.model);

  if (!body.stream) {
    const result = await attemptRoutes(
      context.model,
      (route) => chatModel(route).doGenerate(optionsFor(route.upstreamModel)),
      logAttempts(context),
    );
    const usage = result.usage ?? (await estimateChatUsage(options!, result.text ?? ""));
    await context.settle({ tokens: usage }, { upstreamRequestId: result.upstreamRequestId });
    const response = buildResponsesResponse({ body, head, result, usage, now: services.now() });
    await keep(body, context, response);
    return {
      kind: "json",
      body: response,
      usage: { tokens: usage },
      warnings: [...warnings, ...result.warnings],
    };
  }

  const parts = await attemptRoutes(
    context.model,
    (route) => chatModel(route).doStream(optionsFor(route.upstreamModel)),
    logAttempts(context),
  );
  const skeleton = responseSkeleton(body, head);
  const writer = new ResponsesStreamWriter(skeleton);
  const state = {
    usage: undefined as TokenUsage | undefined,
    /** The upstream broke mid-stream (not the client going away). */
    interrupted: false,
  };
  const delivered = new DeliveredText();
  let promptTokens: Promise<number> | undefined;
  /** The gateway's own count: the prompt (counted once) and the output delivered so far. */
  const ownCount = async (): Promise<TokenUsage> => {
    promptTokens ??= countTokens(promptText(options!.messages), { exact: true });
    return {
      input: {
        total: (await promptTokens) + options!.messages.length * 4 + 3,
        cacheRead: 0,
        cacheWrite: 0,
      },
      output: { total: await delivered.tokens(), reasoning: 0 },
      source: "estimated",
    };
  };

  async function* frames(): AsyncGenerator<StreamFrame> {
    yield* writer.start();
    let finishReason: ChatFinishReason = "stop";
    try {
      for await (const part of parts as AsyncIterable<ChatStreamPart>) {
        if (part.type === "finish") {
          finishReason = part.finishReason;
          state.usage = part.usage;
          continue;
        }
        const frames = writer.part(part);
        if (frames.length === 0) continue;
        if (part.type === "text-delta" || part.type === "reasoning-delta")
          delivered.add(part.delta);
        if (part.type === "tool-call-delta") delivered.add(part.argumentsDelta);
        yield* frames;
      }
    } catch (error) {
      state.interrupted = !context.signal.aborted;
      yield* writer.failed(error);
      return;
    }
    yield* writer.close(finishReason);
    const usage = state.usage ?? (await ownCount());
    state.usage = usage;
    await context.settle({ tokens: usage });
    const response = finishedResponse(skeleton, {
      output: writer.output,
      finishReason,
      usage,
      now: services.now(),
    });
    await keep(body, context, response);
    yield writer.terminal(response);
  }

  return {
    kind: "stream",
    frames: frames(),
    warnings,
    // Read on abort, on an upstream break and for checkpoints (a completed stream has settled
    // already): what was delivered, and nothing at all when the upstream broke before any output.
    usage: async () => {
      const own = await ownCount();
      if (state.interrupted && own.output.total === 0 && !state.usage) return undefined;
      return { tokens: atLeastDelivered(state.usage, own) };
    },
    interrupted: () => state.interrupted,
  };
}
