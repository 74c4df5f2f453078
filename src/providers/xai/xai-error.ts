/**
 * @module providers/xai/xai-error
 * xAI's error bodies, in either of the shapes seen: OpenAI's envelope
 * `{"error":{"message","code"|"type"}}` or the flat `{"code","error":"<message>"}`. The same
 * reader serves a non-2xx answer and the `error` of a failed video task.
 */
import type { UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";
import { readOpenAIErrorFields } from "../openai-compatible/map-openai-response.ts";

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function readXaiErrorFields(body: unknown): { message?: string; code?: string } {
  const { error, code, message } = body as { error?: unknown; code?: unknown; message?: unknown };
  if (typeof error === "object" && error !== null) {
    const fields = readOpenAIErrorFields(body);
    return {
      ...(nonEmpty(fields.message) ? { message: fields.message } : {}),
      ...(nonEmpty(fields.code) ? { code: fields.code } : {}),
    };
  }
  const text = nonEmpty(error) ?? nonEmpty(message);
  return {
    ...(text !== undefined ? { message: text } : {}),
    ...(nonEmpty(code) ? { code: code as string } : {}),
  };
}

/** An `UpstreamError` for a non-2xx answer, with xAI's text and code. */
export function readXaiError(response: UpstreamResponse): Promise<UpstreamError> {
  return readUpstreamError(response, readXaiErrorFields);
}
