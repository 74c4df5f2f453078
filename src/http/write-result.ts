/**
 * @module http/write-result
 * Writes the long-lived results of the model-endpoint pipeline: Server-Sent Events (`stream`)
 * and raw bytes such as audio (`binary`). Both hijack the reply, respect backpressure, stop when
 * the client goes away, settle the usage before ending the response and release the hold when
 * the upstream failed.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { SettleDetails, Settlement } from "../billing/index.ts";
import type { QuotaLease } from "../limits/index.ts";
import type { Usage } from "../spec/index.ts";
import type { OperationResult } from "./model-endpoint.ts";
import { drained, writeSse } from "./sse.ts";

export type LongResult = Extract<OperationResult, { kind: "stream" | "binary" }>;

export interface WriteControl {
  lease: QuotaLease;
  abort: AbortController;
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  release(reason: string): Promise<void>;
  /** Records what was delivered so far (the charge if the process dies before settling). */
  checkpoint?(usage: Usage): Promise<void>;
  /** True once the request was settled (a stream that ran to its end settles itself). */
  settled?(): boolean;
  /** Makes the request durable before its first byte goes out (a crash then settles it). */
  beginDelivery?(): Promise<void>;
  /** How often a long result writes a checkpoint. */
  checkpointMs?: number;
  /** Keep-alive comment interval of SSE streams. */
  heartbeatMs?: number;
}

export async function writeLongResult(
  request: FastifyRequest,
  reply: FastifyReply,
  result: LongResult,
  control: WriteControl,
): Promise<void> {
  reply.hijack();
  const response = reply.raw;
  const base = {
    ...(reply.getHeaders() as Record<string, string>),
    ...control.lease.headers,
    ...result.headers,
  };
  const head =
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
        };
  let started = false;
  let failed = false;
  const checkpoints = startCheckpoints(request, result, control);
  try {
    await control
      .beginDelivery?.()
      .catch((error: unknown) =>
        request.log.error({ err: error, requestId: request.id }, "in-flight record failed"),
      );
    response.writeHead(200, head);
    started = true;
    if (result.kind === "stream") {
      await writeSse(response, result.frames, {
        signal: control.abort.signal,
        heartbeatMs: control.heartbeatMs,
      });
    } else {
      await writeBinary(response, result.body, control.abort.signal);
    }
  } catch (error) {
    failed = true;
    request.log.warn({ err: error, requestId: request.id }, `${result.kind} ended with an error`);
  } finally {
    checkpoints.stop();
    // Charge what was delivered, even when the client went away or the upstream broke
    // mid-stream; an upstream failure before anything was delivered, or a response that could
    // not even start, is charged nothing.
    // A stream that ran to its end settled itself (its final usage is known): nothing to count.
    if (!control.settled?.()) {
      const usage = started ? await result.usage().catch(() => undefined) : undefined;
      const interrupted = result.interrupted?.() === true;
      await (usage
        ? control.settle(usage, interrupted ? { status: "interrupted" } : {})
        : control.release("upstream failed mid-stream")
      ).catch((error: unknown) =>
        request.log.error({ err: error, requestId: request.id }, "settlement failed"),
      );
    }
    control.lease.release();
    // Bytes have no error frame: a binary body cut short is cut for the client too (no final
    // chunk), so a truncated file is never taken for a complete one.
    if (failed && (result.kind === "binary" || !started)) response.destroy();
    else if (!response.writableEnded) response.end();
  }
}

/**
 * Writes a checkpoint of the delivered usage every `checkpointMs` while a long result runs, one
 * at a time, so a process that dies mid-stream is settled at what it had delivered.
 */
function startCheckpoints(
  request: FastifyRequest,
  result: LongResult,
  control: WriteControl,
): { stop(): void } {
  const checkpoint = control.checkpoint;
  if (!checkpoint || !control.checkpointMs) return { stop() {} };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    result
      .usage()
      .then((usage) => (usage ? checkpoint(usage) : undefined))
      .catch((error: unknown) =>
        request.log.warn({ err: error, requestId: request.id }, "usage checkpoint failed"),
      )
      .finally(() => {
        busy = false;
      });
  }, control.checkpointMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
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
