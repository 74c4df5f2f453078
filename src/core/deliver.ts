/**
 * @module core/deliver
 * Delivers a long result (a stream of events or of bytes) through a transport's sink and makes
 * the money right however the delivery ends: the request is made durable before its first byte,
 * checkpoints record what was delivered while it runs, and at the end what was delivered is
 * settled (also when the client went away or the upstream broke) or, when nothing was, the hold
 * is released. The HTTP layer's sink writes SSE or raw bytes; the MCP layer's collects.
 */
import type { Logger } from "pino";
import type { SettleDetails, Settlement } from "../billing/index.ts";
import type { QuotaLease } from "../limits/index.ts";
import type { CallSignal, Usage } from "../spec/index.ts";
import { CallAbort } from "./call-abort.ts";
import { framesTogether, type LongResult, type StreamFrame } from "./operation.ts";

/** Where a transport puts a long result. */
export interface DeliverySink {
  /** The answer starts (the HTTP layer writes its status line and headers). */
  open(result: LongResult): void;
  /** Delivers the whole result; rejects when the delivery broke. */
  pump(result: LongResult, signal: CallSignal): Promise<void>;
  /**
   * Ends the answer; `failed` when the delivery broke (`error` says why), `opened` when `open`
   * had run.
   */
  close(result: LongResult, outcome: { failed: boolean; opened: boolean; error?: unknown }): void;
  /**
   * The sink hands the result on only once it is whole (MCP's collecting sink: a tool result is
   * one message): a delivery that broke or was aborted delivered nothing, and is charged nothing.
   */
  wholeOnly?: boolean;
}

export interface DeliveryControl {
  logger: Logger;
  requestId: string;
  lease: QuotaLease;
  /** Aborted when the client went away. */
  signal: CallSignal;
  settle(usage: Usage, details?: SettleDetails): Promise<Settlement>;
  release(reason: string): Promise<void>;
  /** Records what was delivered so far (the charge if the process dies before settling). */
  checkpoint(usage: Usage): Promise<void>;
  /** True once the request was settled (a stream that ran to its end settles itself). */
  settled(): boolean;
  /** Makes the request durable before its first byte goes out (a crash then settles it). */
  beginDelivery(): Promise<void>;
  /** How often a checkpoint is written (0: never). */
  checkpointMs: number;
}

export async function deliverLongResult(
  result: LongResult,
  sink: DeliverySink,
  control: DeliveryControl,
): Promise<void> {
  const { logger, requestId } = control;
  let opened = false;
  let failed = false;
  let failure: unknown;
  // Stopped when the client goes away, or when a checkpoint finds the request settled by
  // another path (`request_abandoned`): what follows would be delivered free.
  const stop = new CallAbort();
  const onClientGone = () => stop.abort(control.signal.reason);
  if (control.signal.aborted) onClientGone();
  else control.signal.addEventListener("abort", onClientGone, { once: true });
  const checkpoints = startCheckpoints(result, control, (error) => stop.abort(error));
  // Charge what was delivered, even when the client went away or the upstream broke
  // mid-stream; an upstream failure before anything was delivered, or an answer that could not
  // even start, is charged nothing. A stream that ran to its end settled itself.
  let ended = false;
  const settleDelivered = async (cutShort: boolean): Promise<void> => {
    if (ended || control.settled()) return;
    ended = true;
    const delivered = opened && !(sink.wholeOnly && cutShort);
    const usage = delivered ? await result.usage().catch(() => undefined) : undefined;
    const interrupted = result.interrupted?.() === true;
    await (usage
      ? control.settle(usage, interrupted ? { status: "interrupted" } : {})
      : control.release(
          delivered || !opened ? "upstream failed mid-stream" : "ended before its result was whole",
        ));
  };
  const delivering: LongResult =
    result.kind === "stream"
      ? { ...result, frames: settledBeforeInterruption(result.frames, settleDelivered) }
      : result;
  try {
    // A database that refuses the request's in-flight row fails it before its first byte,
    // charged nothing (released below), rather than delivering an answer a crash would then
    // make free.
    await control.beginDelivery().catch((error: unknown) => {
      logger.error({ err: error, requestId }, "in-flight record failed");
      throw error;
    });
    sink.open(result);
    opened = true;
    await sink.pump(delivering, stop);
    // Stopped for a checkpoint's finding, not by the client: the answer is cut short.
    if (stop.aborted && !control.signal.aborted) throw stop.reason;
  } catch (error) {
    failed = true;
    failure = error;
    logger.warn({ err: error, requestId }, `${result.kind} ended with an error`);
  } finally {
    checkpoints.stop();
    control.signal.removeEventListener("abort", onClientGone);
    await settleDelivered(failed || stop.aborted).catch((error: unknown) =>
      logger.error({ err: error, requestId }, "settlement failed"),
    );
    control.lease.release();
    sink.close(result, { failed, opened, error: failure });
  }
}

/**
 * Passes a stream's frames on, and settles what was delivered before the frame that tells the
 * client the upstream broke (`interrupts`): a client that reads that ending finds its charge
 * (`interrupted`) on record, as it does after a whole answer's last frame. A plain iterator, not
 * a generator: an ordinary frame costs one `then` on its way, and its result object is passed on
 * as it came. Stopping early (`return`) stops the source, which closes the upstream's body.
 */
function settledBeforeInterruption(
  frames: AsyncIterable<StreamFrame>,
  settleDelivered: (cutShort: boolean) => Promise<void>,
): AsyncIterable<StreamFrame> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<StreamFrame> {
      const source = frames[Symbol.asyncIterator]();
      /** The interrupting rest of a batch whose first frames went out on their own. */
      let rest: StreamFrame | undefined;
      const onStep = (
        step: IteratorResult<StreamFrame>,
      ): IteratorResult<StreamFrame> | Promise<IteratorResult<StreamFrame>> => {
        if (step.done) return step;
        const at = interruptionAt(step.value);
        if (at < 0) return step;
        if (at === 0) return settleDelivered(false).then(() => step);
        const parts = step.value.batch as StreamFrame[];
        rest = framesTogether(parts.slice(at));
        return { done: false, value: framesTogether(parts.slice(0, at)) };
      };
      return {
        next() {
          if (rest) {
            const value = rest;
            rest = undefined;
            return settleDelivered(false).then(() => ({ done: false, value }));
          }
          return source.next().then(onStep);
        },
        return(value?: unknown) {
          return source.return
            ? source.return(value)
            : Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
}

/** The index of a frame's first interrupting part (the frame itself is 0), or -1. */
function interruptionAt(frame: StreamFrame): number {
  const parts = frame.batch;
  if (!parts) return frame.interrupts === true ? 0 : -1;
  for (let at = 0; at < parts.length; at += 1) if (parts[at]?.interrupts === true) return at;
  return -1;
}

/**
 * Writes a checkpoint of the delivered usage every `checkpointMs` while a long result runs, one
 * at a time, so a process that dies mid-stream is settled at what it had delivered.
 */
function startCheckpoints(
  result: LongResult,
  control: DeliveryControl,
  abandon: (error: unknown) => void,
): { stop(): void } {
  if (!control.checkpointMs) return { stop() {} };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    result
      .usage()
      .then((usage) => (usage ? control.checkpoint(usage) : undefined))
      .catch((error: unknown) => {
        if ((error as { code?: unknown }).code === "request_abandoned") {
          control.logger.warn(
            { requestId: control.requestId },
            "stream stopped: the request was settled by another instance while this one was cut off from the database",
          );
          abandon(error);
          return;
        }
        control.logger.warn(
          { err: error, requestId: control.requestId },
          "usage checkpoint failed",
        );
      })
      .finally(() => {
        busy = false;
      });
  }, control.checkpointMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
