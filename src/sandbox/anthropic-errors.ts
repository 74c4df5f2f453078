/**
 * @module sandbox/anthropic-errors
 * Anthropic's error envelope `{"type":"error","error":{"type","message"},"request_id"}`: the
 * error type for each HTTP status, the bodies the sandbox injects, and the helper that sends one
 * with its `request-id` header.
 * @see https://docs.anthropic.com/en/api/errors
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
  request_id: string;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` random base62 characters (the alphabet of Anthropic's ids). */
export function randomBase62(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += BASE62[byte % BASE62.length];
  return out;
}

/** A fresh request id in Anthropic's format (`req_011C…`). */
export function newRequestId(): string {
  return `req_011C${randomBase62(20)}`;
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const MESSAGE_BY_TYPE: Record<string, string> = {
  invalid_request_error: "Invalid request.",
  authentication_error: "invalid x-api-key",
  billing_error: "Your credit balance is too low to access the Anthropic API.",
  permission_error: "Your API key does not have permission to use the specified resource.",
  not_found_error: "The requested resource could not be found.",
  request_too_large: "Request exceeds the maximum allowed number of bytes.",
  rate_limit_error: "Number of requests has exceeded your per-minute rate limit.",
  api_error: "Internal server error",
  timeout_error: "Request timed out.",
  overloaded_error: "Overloaded",
};

/** Anthropic's error type for a status: the documented ones, else by class (4xx / 5xx). */
export function anthropicErrorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

export function anthropicError(
  type: string,
  message: string,
  requestId: string,
): AnthropicErrorBody {
  return { type: "error", error: { type, message }, request_id: requestId };
}

/** The body Anthropic sends for an error status, used when a fault injects that status. */
export function anthropicErrorForStatus(status: number, requestId: string): AnthropicErrorBody {
  const type = anthropicErrorType(status);
  return anthropicError(type, MESSAGE_BY_TYPE[type] ?? `Request failed (${status}).`, requestId);
}

/** Sends an Anthropic error envelope with the `request-id` header (plus any extra headers). */
export function sendAnthropicError(
  reply: FastifyReply,
  status: number,
  body: AnthropicErrorBody,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers({ "request-id": body.request_id, ...headers })
    .type("application/json")
    .send(body);
}
