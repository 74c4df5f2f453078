/**
 * @module sandbox/gemini-errors
 * Google's error envelope `{"error":{"code","message","status"}}`: the canonical status string
 * for each HTTP code, the bodies the sandbox injects for a `status=N` fault, and the helper that
 * sends one.
 * @see https://cloud.google.com/apis/design/errors#handling_errors
 * @see https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes
 */
import type { FastifyReply } from "fastify";

export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: GoogleErrorDetail[] };
}

/** A `google.rpc.ErrorInfo` detail: the machine-readable reason of an error. */
export interface GoogleErrorDetail {
  "@type": string;
  reason: string;
  domain: string;
  metadata?: Record<string, string>;
}

export function googleError(code: number, message: string, status: string): GoogleErrorBody {
  return { error: { code, message, status } };
}

/**
 * What Google answers for a missing or unknown API key: 400, not 401, told apart from a bad
 * request only by its `ErrorInfo` reason `API_KEY_INVALID`.
 */
export const GOOGLE_INVALID_KEY: GoogleErrorBody = {
  error: {
    ...googleError(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
      .error,
    details: [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "API_KEY_INVALID",
        domain: "googleapis.com",
        metadata: { service: "generativelanguage.googleapis.com" },
      },
    ],
  },
};

/** A 400 `INVALID_ARGUMENT` with the given message (request validation failures). */
export function invalidArgument(message: string): GoogleErrorBody {
  return googleError(400, message, "INVALID_ARGUMENT");
}

/** The canonical `google.rpc.Code` name Google pairs with an HTTP status. */
export function googleStatusName(status: number): string {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

const MESSAGES: Record<string, string> = {
  INVALID_ARGUMENT: "Request contains an invalid argument.",
  UNAUTHENTICATED:
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
  PERMISSION_DENIED: "The caller does not have permission",
  NOT_FOUND: "Requested entity was not found.",
  ABORTED: "The operation was aborted.",
  RESOURCE_EXHAUSTED:
    "You exceeded your current quota, please check your plan and billing details.",
  CANCELLED: "The operation was cancelled.",
  UNIMPLEMENTED: "Method not implemented.",
  UNAVAILABLE: "The model is overloaded. Please try again later.",
  DEADLINE_EXCEEDED: "Deadline expired before operation could complete.",
  INTERNAL:
    "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  FAILED_PRECONDITION: "Precondition check failed.",
};

/** The body Google sends for an error status, used when a fault injects that status. */
export function googleErrorForStatus(status: number): GoogleErrorBody {
  const name = googleStatusName(status);
  return googleError(status, MESSAGES[name] ?? `Request failed with status ${status}.`, name);
}

/** Sends a Google error body with its status code and extra headers. */
export function sendGoogleError(
  reply: FastifyReply,
  body: GoogleErrorBody,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(body.error.code).headers(headers).type("application/json").send(body);
}
