/**
 * @module providers/kit/deadline-sweeper
 * Long total deadlines of upstream answers (ten seconds and more; the default is four minutes)
 * at almost no cost per call: no timer, abort controller or listener of its own, only an entry
 * in a map that one shared timer sweeps about once a second. The body's reader forgets the entry
 * as soon as the body is read (or dropped), so nothing of a call outlives it; a body still open
 * past its deadline is destroyed with the deadline's error, which its reader then gets (and undici
 * aborts the call). Short deadlines, which a second's resolution would blur, keep a precise timer
 * of their own (`answer-deadline.ts`).
 */

/** The part of an upstream body (undici's) the sweeper needs. */
export interface SweptBody {
  readonly destroyed: boolean;
  destroy(error?: Error): unknown;
}

export interface DeadlineSweeper {
  /** Destroys `body` with the deadline's error if it is still watched at `deadlineAt`. */
  watch(body: SweptBody, deadlineAt: number, totalMs: number): void;
  /** The body was read whole or dropped: no deadline for it any more. */
  forget(body: object): void;
  /** The sweeper's clock (milliseconds, monotonic). */
  now(): number;
  /** One sweep at `now` (the timer's work; tests call it with a clock of their own). */
  sweep(now: number): void;
  /** Bodies watched and not yet forgotten. */
  readonly size: number;
  /** Stops the timer; bodies still watched are left alone. */
  close(): void;
}

interface Deadline {
  at: number;
  totalMs: number;
}

export interface DeadlineSweeperOptions {
  /** The error a body past its deadline is destroyed with. */
  expired(totalMs: number): Error;
  /** How often the timer sweeps (default 1,000 ms). */
  everyMs?: number;
  /** The clock (default `performance.now`). */
  now?: () => number;
  /** Whether a timer sweeps at all (default true; false for tests that sweep by hand). */
  timer?: boolean;
}

export function createDeadlineSweeper(options: DeadlineSweeperOptions): DeadlineSweeper {
  const everyMs = options.everyMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  const watched = new Map<SweptBody, Deadline>();
  let timer: NodeJS.Timeout | undefined;

  function stopWhenIdle(): void {
    if (watched.size > 0 || !timer) return;
    clearInterval(timer);
    timer = undefined;
  }

  function sweep(at: number): void {
    for (const [body, deadline] of watched) {
      if (body.destroyed) watched.delete(body);
      else if (at >= deadline.at) {
        watched.delete(body);
        body.destroy(options.expired(deadline.totalMs));
      }
    }
    stopWhenIdle();
  }

  return {
    watch(body, deadlineAt, totalMs) {
      watched.set(body, { at: deadlineAt, totalMs });
      if (!timer && options.timer !== false) {
        timer = setInterval(() => sweep(now()), everyMs);
        timer.unref();
      }
    },
    forget(body) {
      watched.delete(body as SweptBody);
    },
    now,
    sweep,
    get size() {
      return watched.size;
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
