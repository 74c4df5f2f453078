/**
 * @module providers/gemini/gemini-error
 * Reads Google's error envelope `{"error":{"code","message","status"}}` (also wrapped in an array,
 * as non-SSE streams send it) into an `UpstreamError` whose `vendorCode` is the status name.
 * `RESOURCE_EXHAUSTED`, `UNAVAILABLE`, `INTERNAL` and `DEADLINE_EXCEEDED` are retryable; the
 * other names are not, whatever the HTTP status.
 * @see https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes
 */
import type { UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";

const RETRYABLE = new Set(["RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"]);
const FINAL = new Set([
  "INVALID_ARGUMENT",
  "FAILED_PRECONDITION",
  "PERMISSION_DENIED",
  "UNAUTHENTICATED",
  "NOT_FOUND",
]);

export function readGeminiErrorFields(body: unknown): { message?: string; code?: string } {
  const envelope = (Array.isArray(body) ? body[0] : body) as { error?: unknown } | undefined;
  const error = envelope?.error as { message?: unknown; status?: unknown } | undefined;
  if (typeof error !== "object" || error === null) return {};
  return {
    message: typeof error.message === "string" ? error.message : undefined,
    code: typeof error.status === "string" ? error.status : undefined,
  };
}

/** Whether Google's status name says the call may succeed if retried; undefined if unknown. */
export function isRetryableGeminiStatus(status: string | undefined): boolean | undefined {
  if (status === undefined) return undefined;
  if (RETRYABLE.has(status)) return true;
  return FINAL.has(status) ? false : undefined;
}

export async function readGeminiError(response: UpstreamResponse): Promise<UpstreamError> {
  const error = await readUpstreamError(response, readGeminiErrorFields);
  const retryable = isRetryableGeminiStatus(error.vendorCode);
  if (retryable === undefined) return error;
  return error.with({ retryable });
}
