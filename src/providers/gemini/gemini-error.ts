/**
 * @module providers/gemini/gemini-error
 * Reads Google's error envelope `{"error":{"code","message","status"}}` (also wrapped in an array,
 * as non-SSE streams send it) into an `UpstreamError` whose `vendorCode` is the status name.
 * `RESOURCE_EXHAUSTED`, `UNAVAILABLE`, `INTERNAL` and `DEADLINE_EXCEEDED` are retryable; the
 * other names are not, whatever the HTTP status. Google refuses a bad API key with 400
 * `INVALID_ARGUMENT` whose `ErrorInfo` reason is `API_KEY_INVALID`: that is the gateway's
 * credential, not the client's request, so it is read as the 401 it means.
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

/** Whether Google's error names the API key as its reason (`API_KEY_INVALID` and the like). */
export function blamesGeminiApiKey(body: unknown): boolean {
  const envelope = (Array.isArray(body) ? body[0] : body) as { error?: unknown } | undefined;
  const details = (envelope?.error as { details?: unknown } | undefined)?.details;
  if (!Array.isArray(details)) return false;
  return details.some((detail: unknown) => {
    const reason = (detail as { reason?: unknown } | null)?.reason;
    return typeof reason === "string" && reason.startsWith("API_KEY_");
  });
}

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
  const read = await readUpstreamError(response, readGeminiErrorFields);
  const error =
    read.status === 400 && blamesGeminiApiKey(read.body) ? read.with({ status: 401 }) : read;
  const retryable = isRetryableGeminiStatus(error.vendorCode);
  if (retryable === undefined) return error;
  return error.with({ retryable });
}
