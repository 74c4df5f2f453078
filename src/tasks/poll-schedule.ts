/**
 * @module tasks/poll-schedule
 * When a task is polled next, and how fast a vendor may be polled. The interval grows with the
 * task's age (a young task is polled often, an old one seldom: video jobs take minutes), and a
 * vendor's `Retry-After` pushes the next poll out. Each vendor has a token bucket shared by all
 * its tasks on this instance (DashScope allows 20 task queries per second per account).
 */

export interface PollScheduleOptions {
  /** First interval, and the floor. */
  minIntervalMs: number;
  /** The ceiling. */
  maxIntervalMs: number;
}

/** The delay before the next poll of a task `ageMs` old. */
export function nextPollDelayMs(ageMs: number, options: PollScheduleOptions): number {
  // A tenth of the task's age: 1 s at 10 s, 6 s at a minute, 30 s from five minutes on.
  const grown = Math.round(Math.max(0, ageMs) / 10);
  return Math.min(options.maxIntervalMs, Math.max(options.minIntervalMs, grown));
}

/** A token bucket: `perSecond` tokens a second, bursts up to `perSecond`. */
export class RateBucket {
  #tokens: number;
  #updatedAt: number;

  constructor(
    readonly perSecond: number,
    private readonly clock: () => number,
  ) {
    this.#tokens = perSecond;
    this.#updatedAt = clock();
  }

  /** Takes a token if one is there. */
  tryTake(): boolean {
    const now = this.clock();
    this.#tokens = Math.min(
      this.perSecond,
      this.#tokens + ((now - this.#updatedAt) / 1000) * this.perSecond,
    );
    this.#updatedAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** One bucket per vendor, made on first use. */
export class VendorRateLimits {
  readonly #buckets = new Map<string, RateBucket>();

  constructor(
    private readonly perSecond: (vendor: string) => number,
    private readonly clock: () => number,
  ) {}

  tryTake(vendor: string): boolean {
    let bucket = this.#buckets.get(vendor);
    if (!bucket) {
      bucket = new RateBucket(this.perSecond(vendor), this.clock);
      this.#buckets.set(vendor, bucket);
    }
    return bucket.tryTake();
  }
}
