/**
 * @module providers/kit/read-error
 * Reads a non-2xx upstream answer into an `UpstreamError`, keeping the vendor's body and code.
 */
import { UpstreamError } from "../../spec/index.ts";
import { headerValue, type UpstreamResponse } from "./http-client.ts";

export type ErrorFieldReader = (body: unknown) => { message?: string; code?: string };

export async function readUpstreamError(
  response: UpstreamResponse,
  readFields: ErrorFieldReader,
  requestIdHeader = "x-request-id",
): Promise<UpstreamError> {
  const text = await response.body.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  const fields = typeof body === "object" && body !== null ? readFields(body) : {};
  const retryAfterSeconds = parseRetryAfter(headerValue(response.headers, "retry-after"));
  return new UpstreamError({
    kind: "http",
    status: response.status,
    message: fields.message ?? (text.slice(0, 500) || `HTTP ${response.status}`),
    vendorCode: fields.code,
    body,
    upstreamRequestId: headerValue(response.headers, requestIdHeader),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

/** `Retry-After` as whole seconds from now: delta-seconds or an HTTP date; else undefined. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
