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
  const retryAfter = headerValue(response.headers, "retry-after");
  return new UpstreamError({
    kind: "http",
    status: response.status,
    message: fields.message ?? (text.slice(0, 500) || `HTTP ${response.status}`),
    vendorCode: fields.code,
    body,
    upstreamRequestId: headerValue(response.headers, requestIdHeader),
    ...(retryAfter ? { cause: { retryAfter } } : {}),
  });
}
