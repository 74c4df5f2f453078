/**
 * @module tasks/webhooks/webhook-schedule
 * When a failed webhook delivery is tried again: delays growing threefold from 10 seconds
 * (10 s, 30 s, 1.5 min, 4.5 min, 13.5 min, 40.5 min), then once an hour, each shortened at
 * random by up to a tenth so that many tasks' retries do not arrive together; no attempt is made
 * more than 24 hours after the first. Also the record of one attempt kept on the task.
 */

/** One delivery attempt as recorded on the task. */
export interface WebhookAttempt {
  /** When the attempt started (ISO 8601, UTC). */
  at: string;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed (refused address, connection error, timeout, non-2xx status). */
  error?: string;
  durationMs: number;
}

export interface WebhookRetrySchedule {
  /** The delay after the first failed attempt. */
  baseDelayMs: number;
  /** Each further delay is this many times the one before. */
  factor: number;
  /** No delay is longer than this. */
  maxDelayMs: number;
  /** Each delay is shortened by a random part of itself, at most this fraction (0 to 1). */
  jitter: number;
  /** No attempt starts later than this after the first. */
  giveUpAfterMs: number;
}

export const DEFAULT_WEBHOOK_SCHEDULE: WebhookRetrySchedule = {
  baseDelayMs: 10_000,
  factor: 3,
  maxDelayMs: 60 * 60_000,
  jitter: 0.1,
  giveUpAfterMs: 24 * 60 * 60_000,
};

/**
 * The delay before the next attempt, once `attemptsMade` attempts (at least 1) have failed.
 * `random` returns a number in [0, 1) (default `Math.random`).
 */
export function nextAttemptDelayMs(
  attemptsMade: number,
  schedule: WebhookRetrySchedule = DEFAULT_WEBHOOK_SCHEDULE,
  random: () => number = Math.random,
): number {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1)
    throw new RangeError(`attemptsMade must be a positive integer, got ${attemptsMade}`);
  // Past the cap the exponent no longer matters (and must not overflow to Infinity).
  const growth = schedule.factor ** Math.min(attemptsMade - 1, 64);
  const delay = Math.min(schedule.baseDelayMs * growth, schedule.maxDelayMs);
  return Math.round(delay * (1 - schedule.jitter * random()));
}

/** Whether an attempt at `at` (ms since the epoch) would come too late after the first one. */
export function shouldGiveUp(
  firstAttemptAt: number,
  at: number,
  schedule: WebhookRetrySchedule = DEFAULT_WEBHOOK_SCHEDULE,
): boolean {
  return at - firstAttemptAt > schedule.giveUpAfterMs;
}

/**
 * When to try again after `attemptsMade` failed attempts, the last one ending at `now`; null
 * when that would be past the give-up window (the task then keeps its attempts and stops).
 */
export function nextAttemptAt(
  firstAttemptAt: number,
  attemptsMade: number,
  now: number,
  schedule: WebhookRetrySchedule = DEFAULT_WEBHOOK_SCHEDULE,
  random: () => number = Math.random,
): number | null {
  const at = now + nextAttemptDelayMs(attemptsMade, schedule, random);
  return shouldGiveUp(firstAttemptAt, at, schedule) ? null : at;
}
