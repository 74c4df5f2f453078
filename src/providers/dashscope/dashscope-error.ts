/**
 * @module providers/dashscope/dashscope-error
 * DashScope's native error envelope `{"request_id","code","message"}`: reading it from a non-2xx
 * answer or from an SSE `error` event, and the HTTP status a code stands for when the status
 * itself is not at hand (errors inside a stream).
 */
import { UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { readUpstreamError } from "../kit/read-error.ts";

export interface DashScopeErrorBody {
  request_id?: string;
  code?: string;
  message?: string;
}

export function readDashScopeErrorFields(body: unknown): { message?: string; code?: string } {
  const { code, message } = body as DashScopeErrorBody;
  return {
    ...(typeof message === "string" && message !== "" ? { message } : {}),
    ...(typeof code === "string" && code !== "" ? { code } : {}),
  };
}

/** The status DashScope answers a code with (its documented table), 500 when unknown. */
export function dashScopeStatusFor(code: string | undefined): number {
  if (!code) return 500;
  if (code === "InvalidApiKey") return 401;
  if (code.startsWith("AccessDenied")) return 403;
  if (code === "ModelNotFound") return 404;
  if (code === "RequestTimeOut") return 408;
  if (code === "BadRequest.TooLarge") return 413;
  if (code.startsWith("Throttling")) return 429;
  if (code.startsWith("InternalError") || code === "ServiceUnavailable") return 500;
  return 400;
}

/** An `UpstreamError` for a non-2xx answer, with the vendor's text, code and request id. */
export async function readDashScopeError(response: UpstreamResponse): Promise<UpstreamError> {
  const error = await readUpstreamError(response, readDashScopeErrorFields);
  const requestId = (error.body as DashScopeErrorBody | undefined)?.request_id;
  if (error.upstreamRequestId || typeof requestId !== "string") return error;
  return error.with({ upstreamRequestId: requestId });
}

/** An error reported inside a 200 answer (an SSE `error` event, or a body with `code`). */
export function dashScopeErrorFromBody(body: DashScopeErrorBody): UpstreamError {
  return new UpstreamError({
    kind: "http",
    status: dashScopeStatusFor(body.code),
    message: body.message || body.code || "DashScope reported an error.",
    vendorCode: body.code,
    body,
    upstreamRequestId: body.request_id,
  });
}
