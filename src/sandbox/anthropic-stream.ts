/**
 * @module sandbox/anthropic-stream
 * Writes an Anthropic event stream onto the raw response: SSE headers, one named event per
 * frame, and the stream faults. Frame i (0-based) is event i; `drop=n`, `malformed=n` and the
 * mid-stream error replace frame min(n, last), so `message_stop` never arrives after them.
 * - `drop=n`: the socket is destroyed.
 * - `malformed=n`: the frame keeps its event name but its data is cut in half (not JSON), then
 *   the stream ends.
 * - mid-stream error (`status=N` together with `malformed=n`): the frame is
 *   `event: error` carrying Anthropic's error for N (e.g. 529 `overloaded_error`), then the
 *   stream ends. The HTTP status stays 200, as with a real mid-stream error.
 * `chunk-delay` waits before every frame but the first.
 */
import type { ServerResponse } from "node:http";
import type { AnthropicErrorBody } from "./anthropic-errors.ts";
import { eventFrame, type StreamEvent } from "./anthropic-shapes.ts";
import { sleep, writeFlushed } from "./connection.ts";

export interface AnthropicStreamFaults {
  chunkDelayMs: number;
  dropAfter: number | undefined;
  malformedAfter: number | undefined;
  /** Send this error event instead of the malformed frame. */
  errorEvent: AnthropicErrorBody | undefined;
}

export interface AnthropicStreamHooks {
  /** Fires when the client goes away; the writer stops. */
  signal: AbortSignal;
  /** Called just before the sandbox cuts the connection for `drop`. */
  onDrop(): void;
}

/** The frame that replaces event `event` for `malformed`: its JSON cut in half. */
export function malformedFrame(event: StreamEvent): string {
  const json = JSON.stringify(event.data);
  return eventFrame(event.event, json.slice(0, Math.floor(json.length / 2)));
}

/** The mid-stream error frame (the envelope without `request_id`, as Anthropic streams it). */
export function errorFrame(body: AnthropicErrorBody): string {
  return eventFrame("error", JSON.stringify({ type: "error", error: body.error }));
}

export async function writeAnthropicStream(
  response: ServerResponse,
  headers: Record<string, string>,
  events: readonly StreamEvent[],
  faults: AnthropicStreamFaults,
  hooks: AnthropicStreamHooks,
): Promise<void> {
  response.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
  const last = events.length - 1;
  const dropAt = faults.dropAfter === undefined ? -1 : Math.min(faults.dropAfter, last);
  const brokenAt = faults.malformedAfter === undefined ? -1 : Math.min(faults.malformedAfter, last);

  for (const [i, event] of events.entries()) {
    if (i > 0 && !(await sleep(faults.chunkDelayMs, hooks.signal))) return;
    if (i === dropAt) {
      hooks.onDrop();
      response.socket?.destroy();
      return;
    }
    if (i === brokenAt) {
      const frame = faults.errorEvent ? errorFrame(faults.errorEvent) : malformedFrame(event);
      if (await writeFlushed(response, frame)) response.end();
      return;
    }
    if (!(await writeFlushed(response, eventFrame(event.event, JSON.stringify(event.data)))))
      return;
  }
  response.end();
}
