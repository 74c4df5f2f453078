/**
 * @module http/sse
 * The only place that writes Server-Sent Events text. Respects backpressure, sends a comment
 * heartbeat while the source is silent, stops when the client goes away, and sends the frames
 * ready in one turn of the event loop in one write.
 */
import type { ServerResponse } from "node:http";
import type { StreamFrame } from "../core/operation.ts";

/** A stream event as SSE writes it (the core's frame type). */
export type SseFrame = StreamFrame;

export function formatSseFrame(frame: SseFrame): string {
  const data = frame.json ?? (frame.data === "[DONE]" ? "[DONE]" : JSON.stringify(frame.data));
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

export async function writeSse(
  response: ServerResponse,
  frames: AsyncIterable<SseFrame>,
  options: { heartbeatMs?: number; signal: AbortSignal },
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
    response.uncork();
  };
  try {
    for await (const frame of frames) {
      if (options.signal.aborted || response.destroyed) break;
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
  } finally {
    clearInterval(heartbeat);
    uncork();
  }
}

/** Waits until the response can take more data, or is gone (closed, or the request aborted). */
export function drained(response: ServerResponse, signal: AbortSignal): Promise<void> {
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
