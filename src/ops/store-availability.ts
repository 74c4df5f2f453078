/**
 * @module ops/store-availability
 * Keeps a database outage an answer instead of a crash: every store call that fails because the
 * database cannot be reached throws `503 store_unavailable` instead, and the outage is logged
 * once when it starts and once when the first call succeeds again. Nothing is retried here: the
 * next request simply tries again (the pool opens fresh connections), so the gateway recovers
 * by itself when the database returns.
 */
import { GatewayError } from "../errors/index.ts";
import { isConnectionFailure } from "../store/index.ts";

export interface AvailabilityEvents {
  /** The first failed call of an outage, with its cause. */
  onDown(error: unknown): void;
  /** The first successful call after an outage. */
  onUp(): void;
}

type Method = (...args: unknown[]) => unknown;

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | undefined)?.then === "function";
}

/** `store` with each method's connection failures turned into `store_unavailable`. */
export function watchStoreAvailability<S extends object>(store: S, events: AvailabilityEvents): S {
  let down = false;
  const succeeded = (value: unknown) => {
    if (down) {
      down = false;
      events.onUp();
    }
    return value;
  };
  const failed = (error: unknown): never => {
    if (!isConnectionFailure(error)) throw error;
    if (!down) {
      down = true;
      events.onDown(error);
    }
    throw new GatewayError("store_unavailable", {}, { cause: error });
  };
  const watched: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== "function" || name === "close") {
      watched[name] = value;
      continue;
    }
    const method = value as Method;
    watched[name] = (...args: unknown[]) => {
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        return failed(error);
      }
      return isPromise(result) ? result.then(succeeded, failed) : result;
    };
  }
  return watched as S;
}
