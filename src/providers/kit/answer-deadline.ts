/**
 * @module providers/kit/answer-deadline
 * A total deadline over one upstream call: the status line, the headers and the whole body must
 * arrive within it, however steadily a vendor trickles the body (a byte just often enough to keep
 * the idle timeout from firing). Past it the call is aborted and fails with an `UpstreamError` of
 * kind `timeout` (504 `upstream_timeout` for the client). The HTTP client applies it to the calls
 * that ask for it (`RequestInit.totalDeadline`) when the deadline is short (under ten seconds);
 * longer ones are kept by the client's sweeper (`deadline-sweeper.ts`), which costs a call no
 * timer of its own.
 */
import { type CallSignal, UpstreamError } from "../../spec/index.ts";
import type { UpstreamBody } from "./bounded-body.ts";
import { shareUpstreamContext } from "./upstream-context.ts";

export interface AnswerDeadline {
  /** Aborted by the deadline or by the caller's signal; carries the caller's request context. */
  readonly signal: AbortSignal;
  /** What to throw for a failed call: a timeout once the deadline has passed, else `error`. */
  explain(error: unknown): unknown;
  /** The body, whose reading fails as a timeout past the deadline; reading it ends the timer. */
  guard(body: UpstreamBody): UpstreamBody;
  /** Stops the timer and lets go of the caller's signal. */
  end(): void;
}

/** The error of an answer that did not arrive whole within `totalMs`. */
export function answerTimeoutError(totalMs: number, cause?: unknown): UpstreamError {
  return new UpstreamError({
    kind: "timeout",
    message: `The upstream did not send its whole answer within ${totalMs} ms.`,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The body's chunks, failing as `explain` says and ending the deadline when the reading ends. Made
 * once, not per call: V8 keeps a generator function made per call, and all it closes over, until
 * its next full collection (docs/performance.md).
 */
async function* guardedChunks(
  body: UpstreamBody,
  explain: (error: unknown) => unknown,
  end: () => void,
): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (error) {
    throw explain(error);
  } finally {
    end();
  }
}

/** Starts the deadline of one call made on behalf of `caller` (the request's signal). */
export function startAnswerDeadline(
  totalMs: number,
  caller: CallSignal | undefined,
): AnswerDeadline {
  const controller = new AbortController();
  let expired = false;
  const onCallerAbort = () => controller.abort(caller?.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(answerTimeoutError(totalMs));
  }, totalMs);
  timer.unref();
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  shareUpstreamContext(caller, controller.signal);

  const end = () => {
    clearTimeout(timer);
    caller?.removeEventListener("abort", onCallerAbort);
  };
  const explain = (error: unknown) =>
    expired && !caller?.aborted ? answerTimeoutError(totalMs, error) : error;

  function guard(body: UpstreamBody): UpstreamBody {
    let iterator: AsyncGenerator<Buffer> | undefined;
    const text = () =>
      body.text().then(
        (value) => {
          end();
          return value;
        },
        (error: unknown) => {
          end();
          throw explain(error);
        },
      );
    return {
      [Symbol.asyncIterator]: () => {
        iterator ??= guardedChunks(body, explain, end);
        return iterator;
      },
      text,
      json: async () => JSON.parse(await text()) as unknown,
      destroy: () => {
        end();
        body.destroy();
      },
    };
  }

  return { signal: controller.signal, explain, guard, end };
}
