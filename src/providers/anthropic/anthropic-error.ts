/**
 * @module providers/anthropic/anthropic-error
 * Reads Anthropic's error envelope `{"type":"error","error":{"type","message"}}` into an
 * `UpstreamError`, from an HTTP error answer or from a mid-stream `error` event. Status 529 and
 * the `overloaded_error` type are retryable wherever they appear.
 * @see https://docs.anthropic.com/en/api/errors
 */
import { UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";

export const ANTHROPIC_REQUEST_ID_HEADER = "request-id";

/** Error types worth retrying on another route (when nothing was sent to the client yet). */
const RETRYABLE_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
]);

export function readAnthropicErrorFields(body: unknown): { message?: string; code?: string } {
  const error = (body as { error?: { type?: unknown; message?: unknown } }).error;
  if (typeof error !== "object" || error === null) return {};
  return {
    message: typeof error.message === "string" ? error.message : undefined,
    code: typeof error.type === "string" ? error.type : undefined,
  };
}

/** Reads a non-2xx answer. */
export async function readAnthropicError(response: UpstreamResponse): Promise<UpstreamError> {
  const error = await readUpstreamError(
    response,
    readAnthropicErrorFields,
    ANTHROPIC_REQUEST_ID_HEADER,
  );
  if (error.retryable || (error.status !== 529 && error.vendorCode !== "overloaded_error")) {
    return error;
  }
  return error.with({ retryable: true });
}

/** The error an `event: error` frame reports after a 200. */
export function anthropicStreamError(data: unknown, upstreamRequestId?: string): UpstreamError {
  const fields = readAnthropicErrorFields(data);
  return new UpstreamError({
    kind: "http",
    message: fields.message ?? "Upstream stream error.",
    vendorCode: fields.code,
    body: data,
    upstreamRequestId,
    retryable: fields.code !== undefined && RETRYABLE_TYPES.has(fields.code),
  });
}
