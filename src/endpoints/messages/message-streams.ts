/**
 * @module endpoints/messages/message-streams
 * The two kinds of `/v1/messages` stream: native (an Anthropic upstream's events relayed, usage
 * read on the way) and translated (a chat model's parts turned into Messages events). Both count
 * what was delivered, so an aborted or broken stream is charged for what the client received.
 */
import {
  atLeastDelivered,
  completedUsage,
  DeliveredText,
  ownStreamCount,
} from "../../billing/index.ts";
import {
  framesTogether,
  type OperationContext,
  type OperationResult,
  type StreamFrame,
} from "../../core/operation.ts";
import type {
  CallWarning,
  ChatStreamPart,
  PassthroughEvent,
  PassthroughStream,
  PassthroughTextEvent,
  TokenUsage,
} from "../../spec/index.ts";
import { newId } from "../../store/index.ts";
import { countMessagesTokens } from "./estimate-messages-cost.ts";
import { toMessagesEvents } from "./messages-stream-events.ts";
import { passthroughFrames, readUnreadDeltas } from "./passthrough-frames.ts";
import type { MessagesRequest } from "./schema.ts";

/**
 * Billing of a Messages stream: the prompt counted once, the delivered output counted as it
 * goes. An aborted or broken stream is charged the larger of the upstream's report and this
 * count; one that broke before any output is charged nothing.
 */
function streamBilling(body: MessagesRequest, context: OperationContext) {
  const delivered = new DeliveredText();
  const state = { delivered, unread: [] as string[], failed: false, interrupted: false };
  const countOwn = ownStreamCount(() => countMessagesTokens(body, { exact: true }), delivered);
  const ownCount = (): Promise<TokenUsage> => {
    readUnreadDeltas(state);
    return countOwn();
  };
  return {
    state,
    ownCount,
    /** Notes an upstream failure (not the client going away) once output may have flowed. */
    noteFailure() {
      state.interrupted = !context.signal.aborted;
    },
    async usage(reported: TokenUsage | undefined) {
      const own = await ownCount();
      // Broken before any output, by the gateway's count and the vendor's: charged nothing.
      const reportedOutput = reported?.output.total ?? 0;
      if (state.interrupted && own.output.total === 0 && reportedOutput === 0) return undefined;
      return { tokens: atLeastDelivered(reported, own) };
    },
  };
}

type StreamBilling = ReturnType<typeof streamBilling>;
type NativeUpstream = PassthroughStream<Array<PassthroughEvent | PassthroughTextEvent>>;

// The frames below come from generator functions made once, which take the request's facts as
// arguments: V8 gives each generator function it creates a map of its own in the old generation,
// which would keep one made per request, and all it closes over, until the next full collection
// (docs/performance.md).

export function nativeStream(
  body: MessagesRequest,
  context: OperationContext,
  upstream: NativeUpstream,
  warnings: CallWarning[],
): OperationResult {
  const billing = streamBilling(body, context);
  return {
    kind: "stream",
    frames: nativeFrames(body, context, upstream, billing),
    warnings,
    usage: () => billing.usage(upstream.usage()),
    interrupted: () => billing.state.interrupted,
  };
}

async function* nativeFrames(
  body: MessagesRequest,
  context: OperationContext,
  upstream: NativeUpstream,
  billing: StreamBilling,
): AsyncGenerator<StreamFrame> {
  try {
    yield* nativeRelay(body, context, upstream, billing);
  } catch (error) {
    // The upstream broke mid-stream: tell the client; what was delivered is billed.
    billing.noteFailure();
    const message = error instanceof Error ? error.message : "Upstream stream failed.";
    yield {
      event: "error",
      data: { type: "error", error: { type: "api_error", message } },
      interrupts: true,
    };
  }
}

async function* nativeRelay(
  body: MessagesRequest,
  context: OperationContext,
  upstream: NativeUpstream,
  billing: StreamBilling,
): AsyncGenerator<StreamFrame> {
  // A read's events go on as one frame; what came before a message_stop goes out before it
  // is settled, as it would one event at a time.
  for await (const batch of passthroughFrames(upstream.events, body.model, billing.state)) {
    let from = 0;
    for (let at = 0; at < batch.length; at++) {
      const frame = batch[at]!;
      if (frame.event === "error") {
        billing.noteFailure();
        batch[at] = { ...frame, interrupts: true };
      }
      if (frame.event !== "message_stop") continue;
      if (at > from) yield framesTogether(batch.slice(from, at));
      from = at;
      await context.settle(
        { tokens: await completedUsage(upstream.usage(), billing.ownCount) },
        { upstreamRequestId: upstream.upstreamRequestId },
      );
    }
    if (from < batch.length) yield framesTogether(from === 0 ? batch : batch.slice(from));
  }
}

/** What a translated stream learns as it runs: the upstream's usage, and what was charged. */
interface TranslatedUsage {
  reported: TokenUsage | undefined;
  charged: TokenUsage | undefined;
}

export function translatedStream(
  body: MessagesRequest,
  context: OperationContext,
  parts: AsyncIterable<ChatStreamPart>,
  warnings: CallWarning[],
): OperationResult {
  const billing = streamBilling(body, context);
  const run: TranslatedUsage = { reported: undefined, charged: undefined };
  return {
    kind: "stream",
    frames: translatedFrames(body, context, parts, billing, run),
    warnings,
    usage: () => billing.usage(run.reported),
    interrupted: () => billing.state.interrupted,
  };
}

async function* translatedFrames(
  body: MessagesRequest,
  context: OperationContext,
  parts: AsyncIterable<ChatStreamPart>,
  billing: StreamBilling,
  run: TranslatedUsage,
): AsyncGenerator<StreamFrame> {
  const inputTokens = await countMessagesTokens(body, { exact: false });
  const id = `msg_${newId("").slice(1)}`;
  const events = toMessagesEvents(parts, { id, model: body.model, inputTokens }, async (usage) => {
    run.reported = usage;
    run.charged = await completedUsage(usage, billing.ownCount);
    return run.charged;
  });
  for await (const frame of events) {
    // Counted as it goes out: a tool call held back behind another is counted once it is sent.
    countDelivered(frame, billing.state.delivered);
    if (frame.event === "error") {
      billing.noteFailure();
      yield { ...frame, interrupts: true };
      continue;
    }
    if (frame.event === "message_stop") await context.settle({ tokens: run.charged! });
    yield frame;
  }
}

/** Adds the text, thinking or tool input a translated event carries to what was delivered. */
function countDelivered(frame: StreamFrame, delivered: DeliveredText): void {
  if (frame.event !== "content_block_delta") return;
  const delta = (frame.data as { delta: Record<string, unknown> }).delta;
  if (delta.type === "text_delta") delivered.add(delta.text as string);
  else if (delta.type === "thinking_delta") delivered.add(delta.thinking as string, true);
  else if (delta.type === "input_json_delta") delivered.add(delta.partial_json as string);
}
