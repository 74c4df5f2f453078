/**
 * @module http/write-result
 * The HTTP sink of long model results: Server-Sent Events (`stream`) and raw bytes such as audio
 * (`binary`). It takes the reply over (hijack), writes the head with the answer's headers,
 * respects backpressure and stops when the client goes away. What is settled and when is
 * `core/deliver`'s business, not this module's.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import type { DeliverySink } from "../core/deliver.ts";
import type { LongResult } from "../core/operation.ts";
import { drained, writeSse } from "./sse.ts";

export function httpDeliverySink(
  reply: FastifyReply,
  headers: Record<string, string>,
  options: { heartbeatMs: number },
): DeliverySink {
  reply.hijack();
  const response = reply.raw;
  return {
    open(result) {
      const base = { ...(reply.getHeaders() as Record<string, string>), ...headers };
      response.writeHead(
        200,
        result.kind === "stream"
          ? {
              ...base,
              "content-type": "text/event-stream; charset=utf-8",
              "cache-control": "no-cache",
              connection: "keep-alive",
              "x-accel-buffering": "no",
            }
          : {
              ...base,
              "content-type": result.contentType,
              "cache-control": "no-cache",
              "x-accel-buffering": "no",
            },
      );
    },
    pump(result: LongResult, signal: AbortSignal) {
      return result.kind === "stream"
        ? writeSse(response, result.frames, { signal, heartbeatMs: options.heartbeatMs })
        : writeBinary(response, result.body, signal);
    },
    close(result, { failed, opened }) {
      // Bytes have no error frame: a binary body cut short is cut for the client too (no final
      // chunk), so a truncated file is never taken for a complete one.
      if (failed && (result.kind === "binary" || !opened)) response.destroy();
      else if (!response.writableEnded) response.end();
    },
  };
}

/** Writes each chunk as it comes, waiting for `drain` when the socket buffer is full. */
export async function writeBinary(
  response: ServerResponse,
  chunks: AsyncIterable<Uint8Array>,
  signal: AbortSignal,
): Promise<void> {
  for await (const chunk of chunks) {
    if (signal.aborted || response.destroyed) break;
    if (chunk.byteLength === 0) continue;
    if (!response.write(chunk)) await drained(response, signal);
  }
}
