/**
 * @module http/sse
 * The only place that writes Server-Sent Events text. Respects backpressure, sends a comment
 * heartbeat while the source is silent, stops when the client goes away, and sends the frames
 * ready in one turn of the event loop in one write (the last ones together with the end).
 */
import type { ServerResponse } from "node:http";
import type { StreamFrame } from "../core/operation.ts";
import type { CallSignal } from "../spec/index.ts";

/** A stream event as SSE writes it (the core's frame type). */
export type SseFrame = StreamFrame;

export function formatSseFrame(frame: SseFrame): string {
  if (frame.batch) {
    let text = "";
    for (const one of frame.batch) text += formatSseFrame(one);
    return text;
  }
  const data = frame.json ?? (frame.data === "[DONE]" ? "[DONE]" : JSON.stringify(frame.data));
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

export async function writeSse(
  response: ServerResponse,
  frames: AsyncIterable<SseFrame>,
  options: { heartbeatMs?: number; signal: CallSignal },
): Promise<void> {
  const heartbeat = setInterval(() => {
    if (!response.writableEnded) response.write(": keep-alive\n\n");
  }, options.heartbeatMs ?? 15_000);
  // The frames of one upstream read arrive in one turn of the event loop: they are written
  // corked and sent together when the turn ends (one system call, not one per frame).
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    // `end()` has already sent everything corked (it uncorks fully); the socket may by now be
    // corked by the connection's next response, which is not ours to uncork.
    if (!response.writableEnded) response.uncork();
  };
  /** The frames ran out: the caller ends the answer next, and `end()` sends the last ones. */
  let complete = false;
  try {
    for await (const frame of frames) {
      if (options.signal.aborted || response.destroyed) return;
      if (!corked) {
        corked = true;
        response.cork();
        setImmediate(uncork);
      }
      if (!response.write(formatSseFrame(frame))) {
        uncork();
        await drained(response, options.signal);
      }
      heartbeat.refresh();
    }
    complete = true;
  } finally {
    clearInterval(heartbeat);
    // A stream that ran to its end keeps its last frames corked: the answer ends at once (or,
    // at the latest, when this turn of the event loop ends), and `end()` then writes those
    // frames and the chunked encoding's terminator in one system call instead of two.
    if (!complete) uncork();
  }
}

/** Waits until the response can take more data, or is gone (closed, or the request aborted). */
export function drained(response: ServerResponse, signal: CallSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    response.once("drain", done);
    response.once("close", done);
    signal.addEventListener("abort", done, { once: true });
    // 'close' may have fired before we started listening.
    if (response.destroyed || signal.aborted) done();
  });
}
