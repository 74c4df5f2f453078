/**
 * @module endpoints/messages/passthrough-frames
 * Relays an Anthropic upstream's events to the client unchanged, except that `message_start`
 * names the model the client asked for. Keeps what was delivered (for an upstream that reports
 * no usage, and for billing an aborted or broken stream): content events (block starts and
 * deltas) the adapter passed on as text are read only when the count is needed. Notes an
 * upstream `error` event.
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
type Block = { text?: unknown; thinking?: unknown; input?: unknown } | undefined;

/** Adds what one `content_block_delta` delivered: text, thinking (as reasoning) or tool input. */
function addDelta(delivered: DeliveredText, delta: Delta): void {
  if (typeof delta !== "object" || delta === null) return;
  if (typeof delta.thinking === "string") delivered.add(delta.thinking, true);
  const text = delta.text ?? delta.partial_json;
  if (typeof text === "string") delivered.add(text);
}

/**
 * Adds what a `content_block_start` delivered: Anthropic starts blocks empty, but a vendor (or a
 * translating proxy) may send a block's whole text, thinking or tool input in it.
 */
function addBlock(delivered: DeliveredText, block: Block): void {
  if (typeof block !== "object" || block === null) return;
  if (typeof block.thinking === "string") delivered.add(block.thinking, true);
  if (typeof block.text === "string") delivered.add(block.text);
  const input = block.input;
  if (typeof input === "object" && input !== null && Object.keys(input).length > 0)
    delivered.add(JSON.stringify(input));
}

/** Adds what a content block event (its parsed data) delivered. */
function addContent(delivered: DeliveredText, data: { delta?: unknown; content_block?: unknown }) {
  addDelta(delivered, data.delta as Delta);
  addBlock(delivered, data.content_block as Block);
}

/** Counts the content events sent as text into `delivered` (when the count is needed). */
export function readUnreadDeltas(state: PassthroughState): void {
  for (const json of state.unread) {
    try {
      const data: unknown = JSON.parse(json);
      if (typeof data === "object" && data !== null) addContent(state.delivered, data);
    } catch {
      // Text that is not JSON delivered nothing countable.
    }
  }
  state.unread = [];
}

/** The client's frames for each read's events, in order (one array per read). */
export async function* passthroughFrames(
  reads: AsyncIterable<Array<PassthroughEvent | PassthroughTextEvent>>,
  requestedModel: string,
  state: PassthroughState,
): AsyncGenerator<StreamFrame[]> {
  for await (const events of reads) {
    const frames: StreamFrame[] = [];
    for (const item of events) frames.push(relayed(item, requestedModel, state));
    if (frames.length > 0) yield frames;
  }
}

function relayed(
  item: PassthroughEvent | PassthroughTextEvent,
  requestedModel: string,
  state: PassthroughState,
): StreamFrame {
  const { event, data } = item;
  if (data === undefined) {
    if (event === "content_block_delta" || event === "content_block_start")
      state.unread.push(item.json);
    return { event, data: undefined, json: item.json };
  }
  if (event === "message_start" && typeof data.message === "object" && data.message !== null)
    return { event, data: { ...data, message: { ...data.message, model: requestedModel } } };
  if (event === "content_block_delta" || event === "content_block_start") {
    readUnreadDeltas(state); // in order: what came as text before this one first
    addContent(state.delivered, data);
  }
  if (event === "error") state.failed = true;
  return { event, data };
}

/** Output tokens of a non-stream Messages body, counted roughly from its content. */
export function countOutputTokens(body: Record<string, unknown>): number {
  const content = Array.isArray(body.content) ? body.content : [];
  return Math.ceil(JSON.stringify(content).length / 4);
}
