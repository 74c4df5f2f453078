/**
 * @module endpoints/messages/passthrough-frames
 * Relays an Anthropic upstream's events to the client unchanged, except that `message_start`
 * names the model the client asked for. Keeps what was delivered (for an upstream that reports
 * no usage, and for billing an aborted or broken stream): deltas the adapter passed on as text
 * are read only when the count is needed. Notes an upstream `error` event.
 */
import type { DeliveredText } from "../../billing/index.ts";
import type { StreamFrame } from "../../core/operation.ts";
import type { PassthroughEvent, PassthroughTextEvent } from "../../spec/index.ts";

export interface PassthroughState {
  delivered: DeliveredText;
  /** Content block deltas sent as text and not yet counted into `delivered`. */
  unread: string[];
  failed: boolean;
}

type Delta = { text?: unknown; thinking?: unknown; partial_json?: unknown } | undefined;

/** Adds what one `content_block_delta` delivered: text, thinking or tool input. */
function addDelta(delivered: DeliveredText, delta: Delta): void {
  const text = delta?.text ?? delta?.thinking ?? delta?.partial_json;
  if (typeof text === "string") delivered.add(text);
}

/** Counts the deltas sent as text into `delivered` (when the count is needed, not per event). */
export function readUnreadDeltas(state: PassthroughState): void {
  for (const json of state.unread) {
    try {
      addDelta(state.delivered, (JSON.parse(json) as { delta?: Delta }).delta);
    } catch {
      // Text that is not JSON delivered nothing countable.
    }
  }
  state.unread = [];
}

export async function* passthroughFrames(
  events: AsyncIterable<PassthroughEvent | PassthroughTextEvent>,
  requestedModel: string,
  state: PassthroughState,
): AsyncGenerator<StreamFrame> {
  for await (const item of events) {
    const { event, data } = item;
    if (data === undefined) {
      if (event === "content_block_delta") state.unread.push(item.json);
      yield { event, data: undefined, json: item.json };
      continue;
    }
    if (event === "message_start" && typeof data.message === "object" && data.message !== null) {
      yield { event, data: { ...data, message: { ...data.message, model: requestedModel } } };
      continue;
    }
    if (event === "content_block_delta") {
      readUnreadDeltas(state); // in order: what came as text before this one first
      addDelta(state.delivered, data.delta as Delta);
    }
    if (event === "error") state.failed = true;
    yield { event, data };
  }
}

/** Output tokens of a non-stream Messages body, counted roughly from its content. */
export function countOutputTokens(body: Record<string, unknown>): number {
  const content = Array.isArray(body.content) ? body.content : [];
  return Math.ceil(JSON.stringify(content).length / 4);
}
