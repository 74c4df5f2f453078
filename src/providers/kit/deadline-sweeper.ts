/**
 * @module providers/kit/deadline-sweeper
 * Long total deadlines of upstream answers (ten seconds and more; the default is four minutes)
 * at almost no cost per call: no timer, abort controller or listener of its own, only an entry
 * in a list that one shared timer sweeps about once a second. A body still open past its
 * deadline is destroyed with the deadline's error, which its reader then gets (and undici aborts
 * the call). Entries whose body has closed are dropped at the next sweep. Short deadlines, which
 * a second's resolution would blur, keep a precise timer of their own (`answer-deadline.ts`).
 */

/** The part of an upstream body (undici's) the sweeper needs. */
export interface SweptBody {
  readonly destroyed: boolean;
  destroy(error?: Error): unknown;
}

export interface DeadlineSweeper {
  /** Destroys `body` with `expired()` if it is still open at `deadlineAt` (the sweeper's clock). */
  watch(body: SweptBody, deadlineAt: number, expired: () => Error): void;
  /** The sweeper's clock (milliseconds, monotonic). */
  now(): number;
  /** One sweep at `now` (the timer's work; tests call it with a clock of their own). */
  sweep(now: number): void;
  /** Bodies watched and not yet dropped. */
  readonly size: number;
  /** Stops the timer; bodies still watched are left alone. */
  close(): void;
}

interface Entry {
  body: SweptBody;
  deadlineAt: number;
  expired: () => Error;
}

export interface DeadlineSweeperOptions {
  /** How often the timer sweeps (default 1,000 ms). */
  everyMs?: number;
  /** The clock (default `performance.now`). */
  now?: () => number;
  /** Whether a timer sweeps at all (default true; false for tests that sweep by hand). */
  timer?: boolean;
}

export function createDeadlineSweeper(options: DeadlineSweeperOptions = {}): DeadlineSweeper {
  const everyMs = options.everyMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  let entries: Entry[] = [];
  let timer: NodeJS.Timeout | undefined;

  function sweep(at: number): void {
    const kept: Entry[] = [];
    for (const entry of entries) {
      if (entry.body.destroyed) continue;
      if (at >= entry.deadlineAt) entry.body.destroy(entry.expired());
      else kept.push(entry);
    }
    entries = kept;
    if (entries.length === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return {
    watch(body, deadlineAt, expired) {
      entries.push({ body, deadlineAt, expired });
      if (!timer && options.timer !== false) {
        timer = setInterval(() => sweep(now()), everyMs);
        timer.unref();
      }
    },
    now,
    sweep,
    get size() {
      return entries.length;
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
