/**
 * @module store/connection-failure
 * Tells a database that cannot be reached (refused, reset, terminated, starting up, shutting
 * down) from every other failure. Such a failure is transient: the start-up wait retries it and
 * a running gateway answers 503 `store_unavailable` while it lasts, then carries on by itself.
 */

/** SQLSTATE codes of a lost or refused connection (class 08, operator intervention 57P0x). */
const CONNECTION_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** Socket and name-resolution errors that mean "no database there right now". */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Messages of `pg` and `pg-pool` for a connection that broke or never came up. */
const CONNECTION_MESSAGES = [
  "Connection terminated",
  "connection error and is not queryable",
  "timeout exceeded when trying to connect",
];

function isOwnFailure(error: object): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    if (code.startsWith("08") && code.length === 5) return true;
    if (CONNECTION_SQLSTATES.has(code) || NETWORK_CODES.has(code)) return true;
  }
  return typeof message === "string" && CONNECTION_MESSAGES.some((text) => message.includes(text));
}

/**
 * True when `error` (or what caused it, or one of an `AggregateError`'s errors) says the
 * database could not be reached. A failed query, a constraint or a bug is not such a failure.
 */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  if (isOwnFailure(error)) return true;
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (Array.isArray(errors) && errors.some((inner) => isConnectionFailure(inner, depth + 1)))
    return true;
  return isConnectionFailure(cause, depth + 1);
}
