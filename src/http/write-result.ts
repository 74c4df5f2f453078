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
import {
  type ErrorDialect,
  framesTogether,
  type LongResult,
  type StreamFrame,
} from "../core/operation.ts";
import type { CallSignal } from "../spec/index.ts";
import { renderError, toGatewayError } from "./error-renderer.ts";
import { drained, formatSseFrame, writeSse } from "./sse.ts";

export function httpDeliverySink(
  reply: FastifyReply,
  headers: Record<string, string>,
  options: { heartbeatMs: number; dialect: ErrorDialect; requestId: string },
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
    pump(result: LongResult, signal: CallSignal) {
      return result.kind === "stream"
        ? writeSse(response, result.frames, { signal, heartbeatMs: options.heartbeatMs })
        : writeBinary(response, result.body, signal);
    },
    close(result, { failed, opened, error }) {
      // Bytes have no error frame: a binary body cut short is cut for the client too (no final
      // chunk), so a truncated file is never taken for a complete one.
      if (failed && (result.kind === "binary" || !opened)) response.destroy();
      else if (response.writableEnded || response.destroyed) return;
      else {
        // A stream the gateway failed after it started (its settlement refused, the request
        // given up) ends with an error in the client's dialect, not with a bare end a client
        // would take for a whole answer.
        if (failed && result.kind === "stream")
          response.write(formatSseFrame(streamEnding(result, error, options)));
        response.end();
      }
    },
  };
}

/** The error that ends a failed stream: the stream's own ending, else the dialect's error event. */
function streamEnding(
  result: Extract<LongResult, { kind: "stream" }>,
  error: unknown,
  options: { dialect: ErrorDialect; requestId: string },
): StreamFrame {
  const gatewayError = toGatewayError(error, options.requestId);
  if (result.failed) return framesTogether(result.failed(gatewayError));
  const { body } = renderError(gatewayError, options.dialect, options.requestId);
  return options.dialect === "anthropic" ? { event: "error", data: body } : { data: body };
}

/** Writes each chunk as it comes, waiting for `drain` when the socket buffer is full. */
export async function writeBinary(
  response: ServerResponse,
  chunks: AsyncIterable<Uint8Array>,
  signal: CallSignal,
): Promise<void> {
  for await (const chunk of chunks) {
    if (signal.aborted || response.destroyed) break;
    if (chunk.byteLength === 0) continue;
    if (!response.write(chunk)) await drained(response, signal);
  }
}
