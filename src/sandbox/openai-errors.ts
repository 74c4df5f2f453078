/**
 * @module sandbox/openai-errors
 * OpenAI's error envelope `{"error":{"message","type","param","code"}}`: the per-status bodies
 * the sandbox injects, and the helper that sends one. OpenAI-compatible vendors (DeepSeek,
 * DashScope compatible-mode, Groq, ...) use the same envelope.
 */
import type { FastifyReply } from "fastify";

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(
  message: string,
  type: string,
  param: string | null = null,
  code: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export const INVALID_API_KEY: OpenAIErrorBody = openAIError(
  "Incorrect API key provided.",
  "invalid_request_error",
  null,
  "invalid_api_key",
);

const SERVER_ERROR = "The server had an error while processing your request. Sorry about that!";

/** The body OpenAI sends for an error status, used when a fault injects that status. */
export function openAIErrorForStatus(status: number): OpenAIErrorBody {
  switch (status) {
    case 400:
      return openAIError("Invalid request.", "invalid_request_error");
    case 401:
      return INVALID_API_KEY;
    case 403:
      return openAIError("You are not allowed to sample from this model.", "invalid_request_error");
    case 404:
      return openAIError(
        "The model does not exist or you do not have access to it.",
        "invalid_request_error",
        null,
        "model_not_found",
      );
    case 408:
      return openAIError("Request timed out.", "invalid_request_error", null, "timeout");
    case 413:
      return openAIError("Request too large.", "invalid_request_error", null, "request_too_large");
    case 429:
      return openAIError(
        "Rate limit reached for requests. Please try again later.",
        "requests",
        null,
        "rate_limit_exceeded",
      );
    case 500:
      return openAIError(SERVER_ERROR, "server_error");
    case 502:
      return openAIError("Bad gateway.", "server_error", null, "bad_gateway");
    case 503:
      return openAIError(
        "The engine is currently overloaded, please try again later.",
        "server_error",
        null,
        "service_unavailable",
      );
    case 504:
      return openAIError("Gateway timeout.", "server_error", null, "gateway_timeout");
    default:
      return status >= 500
        ? openAIError(SERVER_ERROR, "server_error")
        : openAIError(`Request failed with status ${status}.`, "invalid_request_error");
  }
}

/** Sends an OpenAI error body with the given status and extra headers. */
export function sendOpenAIError(
  reply: FastifyReply,
  status: number,
  body: OpenAIErrorBody,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type("application/json").send(body);
}
