/**
 * @module endpoints/messages/passthrough-frames
 * Relays an Anthropic upstream's events to the client unchanged, except that `message_start`
 * names the model the client asked for. Collects the delivered output on the way (for an upstream
 * that reports no usage, and for billing an aborted or broken stream) and notes an upstream
 * `error` event.
 */
import type { DeliveredText } from "../../billing/index.ts";
import type { StreamFrame } from "../../core/operation.ts";
import type { PassthroughEvent } from "../../spec/index.ts";

export async function* passthroughFrames(
  events: AsyncIterable<PassthroughEvent>,
  requestedModel: string,
  state: { delivered: DeliveredText; failed: boolean },
): AsyncGenerator<StreamFrame> {
  for await (const { event, data } of events) {
    if (event === "message_start" && typeof data.message === "object" && data.message !== null) {
      yield { event, data: { ...data, message: { ...data.message, model: requestedModel } } };
      continue;
    }
    if (event === "content_block_delta") {
      const delta = data.delta as
        | { text?: string; thinking?: string; partial_json?: string }
        | undefined;
      state.delivered.add(delta?.text ?? delta?.thinking ?? delta?.partial_json ?? "");
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
