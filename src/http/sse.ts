/**
 * @module http/sse
 * The only place that writes Server-Sent Events text. Respects backpressure, sends a comment
 * heartbeat while the source is silent, and stops when the client goes away.
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
  try {
    for await (const frame of frames) {
      if (options.signal.aborted || response.destroyed) break;
      if (!response.write(formatSseFrame(frame))) await drained(response, options.signal);
      heartbeat.refresh();
    }
  } finally {
    clearInterval(heartbeat);
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
