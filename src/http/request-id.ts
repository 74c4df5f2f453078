/**
 * @module http/request-id
 * Request ids. The gateway's own id (`req_…`, `x-request-id` on every answer) is always made by
 * the gateway: it keys the request's billing rows (hold, charge, usage record), so it must be
 * unique, and a client-chosen one could repeat or name another request. A client's own id —
 * `X-Client-Request-Id`, or else `X-Request-Id` — is kept beside it when valid (1–128 characters
 * of `A-Z a-z 0-9 . _ : -`): echoed as `x-client-request-id`, named in the request's log line
 * and span, and sent upstream as `x-client-request-id`. An invalid one is ignored.
 */
import type { IncomingHttpHeaders } from "node:http";

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Whether `value` is a request id the gateway keeps. */
export function isValidRequestId(value: unknown): value is string {
  return typeof value === "string" && CLIENT_REQUEST_ID.test(value);
}

/** The client's own valid request id: `x-client-request-id`, else `x-request-id`. */
export function clientRequestId(headers: IncomingHttpHeaders): string | undefined {
  const named = headers["x-client-request-id"];
  if (isValidRequestId(named)) return named;
  const plain = headers["x-request-id"];
  return isValidRequestId(plain) ? plain : undefined;
}
