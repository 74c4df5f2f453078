/**
 * @module sandbox/state
 * All mutable sandbox state, one instance per server: the bounded log of received requests, the
 * exchange counters behind `/__sandbox/stats`, and the per-key counters behind `fail-times`.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";

export const REQUEST_LOG_CAPACITY = 200;

export interface SandboxStats {
  /** Vendor-API requests received (admin `/__sandbox/*` calls are not counted). */
  requests: number;
  /** Responses the sandbox finished sending. */
  completed: number;
  /** Requests whose client closed the connection before the response finished. */
  aborted: number;
  /** Connections the sandbox cut on purpose (`drop` fault). */
  dropped: number;
  /** Requests still in flight. */
  open: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; `null` until parsed, or when there is none. */
  body: unknown;
  /** ISO 8601 time of arrival. */
  at: string;
}

export class SandboxState {
  #log: LoggedRequest[] = [];
  #counts = { requests: 0, completed: 0, aborted: 0, dropped: 0 };
  #open = new Set<ServerResponse>();
  #dropped = new WeakSet<ServerResponse>();
  #failures = new Map<string, number>();

  /** Counts a request and classifies how its response ends. */
  track(response: ServerResponse): void {
    this.#counts.requests++;
    this.#open.add(response);
    response.once("close", () => {
      this.#open.delete(response);
      if (response.writableFinished) this.#counts.completed++;
      else if (this.#dropped.has(response)) this.#counts.dropped++;
      else this.#counts.aborted++;
    });
  }

  /** Marks a response whose connection the sandbox is about to destroy on purpose. */
  markDropped(response: ServerResponse): void {
    this.#dropped.add(response);
  }

  /** Appends to the ring buffer, evicting the oldest entry beyond capacity. */
  record(entry: LoggedRequest): LoggedRequest {
    this.#log.push(entry);
    if (this.#log.length > REQUEST_LOG_CAPACITY) this.#log.shift();
    return entry;
  }

  /** The last `limit` requests, oldest first. */
  recent(limit: number = REQUEST_LOG_CAPACITY): LoggedRequest[] {
    return limit <= 0 ? [] : this.#log.slice(-limit);
  }

  stats(): SandboxStats {
    return { ...this.#counts, open: this.#open.size };
  }

  /**
   * For `fail-times=n`: true (and counted) while fewer than `times` requests with this key have
   * failed; false once they have, so later requests succeed.
   */
  shouldFail(key: string, times: number): boolean {
    const failed = this.#failures.get(key) ?? 0;
    if (failed >= times) return false;
    this.#failures.set(key, failed + 1);
    return true;
  }

  /** Forgets the log, the counters and the fail-times keys. In-flight requests stay `open`. */
  reset(): void {
    this.#log = [];
    this.#failures.clear();
    this.#counts = { requests: this.#open.size, completed: 0, aborted: 0, dropped: 0 };
  }
}
