/**
 * @module sandbox/state
 * All mutable sandbox state, one instance per server: the bounded log of received requests, the
 * exchange counters behind `/__sandbox/stats`, the per-key counters behind `fail-times`, and the
 * signer (secret and clock) of the result links. Everything kept is bounded: the log by entries
 * and by body bytes, the `fail-times` keys by number.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { LinkSigner } from "./signed-links.ts";

export const REQUEST_LOG_CAPACITY = 200;
/** Body bytes the log keeps in all (the oldest entries go first; the newest always stays). */
export const REQUEST_LOG_BYTES = 64 * 1024 * 1024;
/** `fail-times` keys remembered (the oldest are forgotten first). */
export const FAIL_KEYS_CAPACITY = 10_000;

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
  /** Signs and checks the links of the result hosts, with this server's own secret. */
  readonly links = new LinkSigner();
  #log: Array<{ entry: LoggedRequest; bytes: number }> = [];
  #logBytes = 0;
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

  /**
   * Appends to the ring buffer (`bytes`: the size of the body, from `content-length`), evicting
   * the oldest entries beyond {@link REQUEST_LOG_CAPACITY} entries or {@link REQUEST_LOG_BYTES}.
   */
  record(entry: LoggedRequest, bytes = 0): LoggedRequest {
    this.#log.push({ entry, bytes });
    this.#logBytes += bytes;
    while (
      this.#log.length > REQUEST_LOG_CAPACITY ||
      (this.#log.length > 1 && this.#logBytes > REQUEST_LOG_BYTES)
    ) {
      this.#logBytes -= this.#log.shift()?.bytes ?? 0;
    }
    return entry;
  }

  /** The last `limit` requests, oldest first. */
  recent(limit: number = REQUEST_LOG_CAPACITY): LoggedRequest[] {
    return limit <= 0 ? [] : this.#log.slice(-limit).map((kept) => kept.entry);
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
    if (this.#failures.size > FAIL_KEYS_CAPACITY) {
      const oldest = this.#failures.keys().next().value;
      if (oldest !== undefined) this.#failures.delete(oldest);
    }
    return true;
  }

  /**
   * Forgets the log, the counters and the fail-times keys, and sets the result hosts' clock back
   * to the real one. In-flight requests stay `open`; links already given stay valid.
   */
  reset(): void {
    this.#log = [];
    this.#logBytes = 0;
    this.links.resetClock();
    this.#failures.clear();
    this.#counts = { requests: this.#open.size, completed: 0, aborted: 0, dropped: 0 };
  }
}
