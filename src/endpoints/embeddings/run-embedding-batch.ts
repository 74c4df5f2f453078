/**
 * @module endpoints/embeddings/run-embedding-batch
 * Runs the parts of a split batch against one route: at most `concurrency` upstream calls at a
 * time, each part retried (with backoff, honouring `retry-after`) while its failure is
 * retryable. Results come back in part order. The first part that fails for good cancels the
 * calls still running and fails the whole batch, with an error naming the part.
 */
import { CallAbort } from "../../core/call-abort.ts";
import { shareUpstreamContext } from "../../core/request-context.ts";
import { type CallSignal, UpstreamError } from "../../spec/index.ts";
import type { BatchPart } from "./split-embedding-batch.ts";

export interface BatchRunOptions {
  /** Upstream calls in flight at once. */
  concurrency: number;
  /** Tries per part, the first included. */
  maxAttempts: number;
  /** Wait before retry number `retry` (1-based), in ms. */
  backoffMs(retry: number, error: UpstreamError): number;
  /** The client's signal: aborting it cancels every call. */
  signal?: CallSignal;
}

/** Exponential backoff from 100 ms, or the upstream's `retry-after` up to 2 s. */
export function defaultBackoffMs(retry: number, error: UpstreamError): number {
  const retryAfter = error.retryAfterSeconds;
  if (retryAfter !== undefined) return Math.min(retryAfter * 1000, 2000);
  return Math.min(100 * 2 ** (retry - 1), 2000);
}

function wait(ms: number, signal: CallSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** The part's failure, with the part named in the message; other fields kept. */
export function partFailure(
  error: UpstreamError,
  part: BatchPart,
  parts: number,
  attempts: number,
): UpstreamError {
  const where =
    parts === 1
      ? ""
      : `Batch part ${part.index + 1} of ${parts} (inputs ${part.start}-${part.end - 1}) failed${attempts > 1 ? ` after ${attempts} attempts` : ""}: `;
  if (where === "") return error;
  return error.with({ message: `${where}${error.message}`, cause: error.cause ?? error });
}

export async function runEmbeddingBatch<T>(
  parts: readonly BatchPart[],
  call: (part: BatchPart, signal: CallSignal) => Promise<T>,
  options: BatchRunOptions,
): Promise<T[]> {
  // The parts' signal: aborted by the client's, or by the first part that fails for good.
  const cancel = new CallAbort();
  const caller = options.signal;
  const onCallerAbort = () => cancel.abort(caller?.reason);
  if (caller?.aborted) cancel.abort(caller.reason);
  else caller?.addEventListener("abort", onCallerAbort);
  const signal: CallSignal = cancel;
  // The parts' calls carry the request's id and trace context, as its own calls do.
  if (caller) shareUpstreamContext(caller, signal);
  const results: T[] = new Array(parts.length);
  let failure: unknown;
  let next = 0;

  async function runPart(part: BatchPart): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        results[part.index] = await call(part, signal);
        return;
      } catch (error) {
        if (signal.aborted && failure !== undefined) return; // cancelled by a sibling's failure
        const upstream = UpstreamError.isInstance(error) ? error : undefined;
        if (!upstream) throw error;
        if (!upstream.retryable || attempt >= options.maxAttempts || signal.aborted)
          throw partFailure(upstream, part, parts.length, attempt);
        await wait(options.backoffMs(attempt, upstream), signal);
      }
    }
  }

  async function worker(): Promise<void> {
    while (failure === undefined && next < parts.length) {
      const part = parts[next++]!;
      try {
        await runPart(part);
      } catch (error) {
        failure ??= error;
        cancel.abort();
      }
    }
  }

  const workers = Math.max(1, Math.min(options.concurrency, parts.length));
  try {
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    caller?.removeEventListener("abort", onCallerAbort);
  }
  if (failure !== undefined) throw failure;
  if (options.signal?.aborted)
    throw new UpstreamError({ kind: "aborted", message: "The request was aborted." });
  return results;
}
