/**
 * @module sandbox/dashscope-errors
 * DashScope's native error envelope `{"request_id","code","message"}`: the bodies the sandbox
 * answers for each status (used by faults and validation), and the helper that sends one.
 */
import { randomUUID } from "node:crypto";
import type { FastifyReply } from "fastify";

export interface DashScopeErrorBody {
  request_id: string;
  code: string;
  message: string;
}

/** DashScope request ids are UUIDs. */
export function dashScopeRequestId(): string {
  return randomUUID();
}

export function dashScopeError(
  code: string,
  message: string,
  requestId: string = dashScopeRequestId(),
): DashScopeErrorBody {
  return { request_id: requestId, code, message };
}

export const INVALID_PARAMETER_MESSAGE =
  "Required parameter(s) missing or invalid, please check the request parameters.";

/** The code and message DashScope sends with an error status (an injected `status=N` fault). */
export function dashScopeErrorForStatus(status: number): { code: string; message: string } {
  switch (status) {
    case 400:
      return { code: "InvalidParameter", message: INVALID_PARAMETER_MESSAGE };
    case 401:
      return { code: "InvalidApiKey", message: "Invalid API-key provided." };
    case 403:
      return { code: "AccessDenied", message: "Access denied." };
    case 404:
      return { code: "ModelNotFound", message: "Model not found." };
    case 408:
      return { code: "RequestTimeOut", message: "Request timed out, please try again later." };
    case 413:
      return { code: "BadRequest.TooLarge", message: "Payload Too Large." };
    case 429:
      return {
        code: "Throttling.RateQuota",
        message: "Requests rate limit exceeded, please try again later.",
      };
    case 503:
      return {
        code: "ServiceUnavailable",
        message: "The service is temporarily unavailable, please try again later.",
      };
    default:
      return status >= 500
        ? {
            code: "InternalError",
            message:
              "An internal error has occured, please try again later or contact service support.",
          }
        : { code: "InvalidParameter", message: `Request failed with status ${status}.` };
  }
}

export function sendDashScopeError(
  reply: FastifyReply,
  status: number,
  body: DashScopeErrorBody,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type("application/json").send(body);
}
