/**
 * @module endpoints/responses/operation
 * The transport-free `POST /v1/responses` operation. A model's routes are tried in order, with
 * fallback before the first byte: a route whose vendor serves the Responses API (OpenAI) is
 * served natively (`native-responses.ts`), any other is translated to the chat model and back.
 * The answer is a Response object or the Responses event stream. A stream that the client
 * aborts or the upstream breaks is billed like a chat stream: the larger of the upstream's
 * report and the gateway's count of what it delivered, nothing when the upstream broke before
 * any output. With `store` (the default) the response is kept once it is settled.
 */
import {
  atLeastDelivered,
  completedUsage,
  DeliveredText,
  ownStreamCount,
} from "../../billing/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import {
  framesTogether,
  interruptionFrames,
  type OperationContext,
  type OperationResult,
  type StreamFrame,
} from "../../core/operation.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import type {
  CallWarning,
  ChatCallOptions,
  ChatFinishReason,
  ChatResult,
  ChatStreamPart,
  PassthroughEvent,
  PassthroughResult,
  PassthroughStream,
  TokenUsage,
} from "../../spec/index.ts";
import { countChatPrompt } from "../chat-completions/count-chat-prompt.ts";
import { choicesOutput, estimateChatUsage } from "../chat-completions/operation.ts";
import { chatModelRules } from "../chat-model-rules.ts";
import { assertStructuredOutput, structuredOutputCheck } from "../structured-output.ts";
import {
  buildResponsesResponse,
  finishedResponse,
  responseSkeleton,
  responsesId,
} from "./build-responses-response.ts";
import { convertResponsesRequest, responsesTextFormat } from "./convert-responses-request.ts";
import { keepResponse } from "./keep-response.ts";
import { clientSnapshot, NativeRelay, nativeResponsesBody } from "./native-responses.ts";
import { ResponsesDelivery } from "./responses-delivery.ts";
import { ResponsesStreamWriter } from "./responses-stream-events.ts";
import type { ResponsesRequest } from "./schema.ts";
import { priorItems } from "./validate-responses-request.ts";

type Attempt =
  | { kind: "native-json"; result: PassthroughResult }
  | { kind: "native-stream"; stream: PassthroughStream<PassthroughEvent[]> }
  | { kind: "json"; result: ChatResult }
  | { kind: "stream"; parts: AsyncIterable<ChatStreamPart> };

/**
 * Billing of a stream: the prompt counted once (as the chat call it is equivalent to), the
 * delivered output counted as it goes.
 */
function streamBilling(options: () => ChatCallOptions, context: OperationContext) {
  const delivered = new DeliveredText();
  const state = { usage: undefined as TokenUsage | undefined, interrupted: false };
  /** The gateway's own count: the prompt (counted once) and the output delivered so far. */
  const ownCount = ownStreamCount(() => countChatPrompt(options()), delivered);
  return {
    state,
    delivered,
    ownCount,
    /** The upstream broke (not the client going away). */
    noteFailure() {
      state.interrupted = !context.signal.aborted;
    },
    // Read on abort, on an upstream break and for checkpoints (a completed stream has settled
    // already): what was delivered, and nothing at all when the upstream broke (or answered
    // `response.failed`) before any output, whatever usage it reported.
    async usage() {
      const own = await ownCount();
      if (state.interrupted && own.output.total === 0) return undefined;
      return { tokens: atLeastDelivered(state.usage, own) };
    },
  };
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

  const check = body.stream
    ? undefined
    : structuredOutputCheck(responsesTextFormat(body), "text.format.schema");
  const attempt = await attemptRoutes<Attempt>(
    context.model,
    async (route) => {
      const call = optionsFor(route.upstreamModel);
      const native = services.providers.responsesPassthrough(route);
      if (native) {
        const passthrough = {
          body: nativeResponsesBody(body, prior, route.upstreamModel),
          headers: {},
          abortSignal: context.signal,
        };
        return body.stream
          ? { kind: "native-stream", stream: await native.stream(passthrough) }
          : { kind: "native-json", result: await native.create(passthrough) };
      }
      const chatModel = adapterFor(services.providers, "chatModel", route, context.model);
      return body.stream
        ? { kind: "stream", parts: await chatModel.doStream(call) }
        : { kind: "json", result: await chatModel.doGenerate(call) };
    },
    logAttempts(context),
    context.services.routeHealth,
  );

  switch (attempt.kind) {
    case "json": {
      const { result } = attempt;
      assertStructuredOutput(check, result);
      const usage = await completedUsage(result.usage, () =>
        estimateChatUsage(options!, choicesOutput([result])),
      );
      await context.settle({ tokens: usage }, { upstreamRequestId: result.upstreamRequestId });
      const response = buildResponsesResponse({ body, head, result, usage, now: services.now() });
      await keepResponse(body, context, response, "translated");
      return {
        kind: "json",
        body: response,
        usage: { tokens: usage },
        warnings: [...warnings, ...result.warnings],
      };
    }
    case "native-json": {
      const { result } = attempt;
      const response = clientSnapshot(result.body, body, head);
      const text = JSON.stringify(response.output ?? []);
      const usage = await completedUsage(result.usage, () => estimateChatUsage(options!, { text }));
      await context.settle({ tokens: usage }, { upstreamRequestId: result.upstreamRequestId });
      await keepResponse(body, context, { ...response, id: head.id, model: head.model }, "native");
      return { kind: "json", body: response, usage: { tokens: usage }, warnings };
    }
    case "stream":
      return translatedStream(body, context, attempt.parts, head, () => options!, warnings);
    case "native-stream":
      return nativeStream(body, context, attempt.stream, head, () => options!, warnings);
  }
}

function translatedStream(
  body: ResponsesRequest,
  context: OperationContext,
  parts: AsyncIterable<ChatStreamPart>,
  head: { id: string; createdAt: number; model: string },
  options: () => ChatCallOptions,
  warnings: CallWarning[],
): OperationResult {
  const skeleton = responseSkeleton(body, head);
  const writer = new ResponsesStreamWriter(skeleton);
  const billing = streamBilling(options, context);
  return {
    kind: "stream",
    frames: translatedFrames(body, context, parts, { skeleton, writer, billing }),
    warnings,
    usage: billing.usage,
    interrupted: () => billing.state.interrupted,
    failed: (error) => writer.failed(error),
  };
}

function nativeStream(
  body: ResponsesRequest,
  context: OperationContext,
  upstream: PassthroughStream<PassthroughEvent[]>,
  head: { id: string; model: string },
  options: () => ChatCallOptions,
  warnings: CallWarning[],
): OperationResult {
  const relay = new NativeRelay(body, head);
  const billing = streamBilling(options, context);
  const delivery = new ResponsesDelivery((text, reasoning) =>
    billing.delivered.add(text, reasoning),
  );
  return {
    kind: "stream",
    frames: nativeFrames(body, context, upstream, head, { relay, billing, delivery }),
    warnings,
    usage: async () => {
      billing.state.usage ??= upstream.usage();
      return billing.usage();
    },
    interrupted: () => billing.state.interrupted,
    failed: (error) => relay.failed(error),
  };
}

// The frames come from generator functions made once, which take the request's facts as
// arguments: V8 gives each generator function it creates a map of its own in the old generation,
// which would keep one made per request, and all it closes over, until the next full collection
// (docs/performance.md).

type StreamBilling = ReturnType<typeof streamBilling>;

async function* translatedFrames(
  body: ResponsesRequest,
  context: OperationContext,
  parts: AsyncIterable<ChatStreamPart>,
  run: {
    skeleton: ReturnType<typeof responseSkeleton>;
    writer: ResponsesStreamWriter;
    billing: StreamBilling;
  },
): AsyncGenerator<StreamFrame> {
  const { skeleton, writer, billing } = run;
  yield* writer.start();
  let finishReason: ChatFinishReason = "stop";
  try {
    for await (const part of parts) {
      if (part.type === "finish") {
        finishReason = part.finishReason;
        billing.state.usage = part.usage;
        continue;
      }
      const frames = writer.part(part);
      if (frames.length === 0) continue;
      if (part.type === "text-delta") billing.delivered.add(part.delta);
      if (part.type === "reasoning-delta") billing.delivered.add(part.delta, true);
      if (part.type === "tool-call-delta") billing.delivered.add(part.argumentsDelta);
      yield* frames;
    }
  } catch (error) {
    billing.noteFailure();
    yield* interruptionFrames(writer.failed(error));
    return;
  }
  yield* writer.close(finishReason);
  const usage = await completedUsage(billing.state.usage, billing.ownCount);
  billing.state.usage = usage;
  await context.settle({ tokens: usage });
  const response = finishedResponse(skeleton, {
    output: writer.output,
    finishReason,
    usage,
    now: context.services.now(),
  });
  await keepResponse(body, context, response, "translated");
  yield writer.terminal(response);
}

async function* nativeFrames(
  body: ResponsesRequest,
  context: OperationContext,
  upstream: PassthroughStream<PassthroughEvent[]>,
  head: { id: string; model: string },
  run: { relay: NativeRelay; billing: StreamBilling; delivery: ResponsesDelivery },
): AsyncGenerator<StreamFrame> {
  const { relay, billing, delivery } = run;
  try {
    // A read's events go on as one frame; what came before a terminal event goes out before
    // it is settled, as it would one event at a time.
    for await (const events of upstream.events) {
      let batch: StreamFrame[] = [];
      for (const { event, data } of events) {
        delivery.note(event, data);
        let frame = relay.frame(event, data);
        if (event === "error" || event === "response.failed") {
          billing.noteFailure();
          frame = { ...frame, interrupts: true };
        }
        if (event === "response.completed" || event === "response.incomplete") {
          if (batch.length > 0) yield framesTogether(batch);
          batch = [];
          const usage = await completedUsage(upstream.usage(), billing.ownCount);
          billing.state.usage = usage;
          await context.settle(
            { tokens: usage },
            { upstreamRequestId: upstream.upstreamRequestId },
          );
          await keepResponse(
            body,
            context,
            { ...relay.snapshot, id: head.id, model: head.model },
            "native",
          );
        }
        batch.push(frame);
      }
      if (batch.length > 0) yield framesTogether(batch);
    }
  } catch (error) {
    billing.noteFailure();
    yield* interruptionFrames(relay.failed(error));
  }
}
