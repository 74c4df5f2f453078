/**
 * @module http/error-renderer
 * Renders any thrown value as an HTTP error in one of the wire dialects:
 * - `gateway`: `{"error":{"message","type","code","param"}}` (OpenAI style)
 * - `provider`: `{"code","message","request_id","error":{"message","type","code"}}` (DashScope
 *   style, `pictor` images; the `error` object repeats the fields so the OpenAI SDKs read them)
 * - `anthropic`: `{"type":"error","error":{"type","message","details":{"error_code"}},
 *   "request_id"}` (`error_code` is the catalogue code, which Anthropic's SDKs expose)
 * Some rules hold in every dialect but Anthropic's: a bad key is gateway style, 402 carries
 * `message` only, and quota 429s are provider style `Throttling.RateQuota` (spec section 7).
 */
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";

/** The `WWW-Authenticate` value sent with every 401. */
export const BEARER_CHALLENGE = 'Bearer realm="switchyard"';

export type ErrorDialect = "gateway" | "provider" | "anthropic";

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The catalogue code, for logs. */
  code: string;
}

const PROVIDER_CODES: Partial<Record<string, string>> = {
  invalid_request: "InvalidParameter",
  invalid_parameter: "InvalidParameter",
  missing_parameter: "InvalidParameter",
  unsupported_parameter: "InvalidParameter",
  invalid_json: "InvalidParameter",
  json_too_deep: "InvalidParameter",
  json_too_many_values: "InvalidParameter",
  model_not_found: "InvalidParameter",
  model_not_allowed: "InvalidParameter",
  endpoint_model_mismatch: "InvalidParameter",
  request_too_large: "BadRequest.TooLarge",
  upstream_timeout: "RequestTimeOut",
  upstream_error: "InternalError",
  upstream_response_too_large: "InternalError",
  internal_error: "InternalError",
};

/** Statuses the provider-style rule of spec section 7 turns into 400 InvalidParameter. */
const PROVIDER_INVALID_PARAMETER = new Set([
  "model_not_found",
  "model_not_allowed",
  "endpoint_model_mismatch",
]);

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  502: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** Configuration failures: Anthropic's `overloaded_error` would tell a client to wait. */
const ANTHROPIC_CONFIGURATION_CODES = new Set(["vendor_not_configured", "provider_not_configured"]);

/**
 * The provider style of spec section 7, with an OpenAI-style `error` object beside its fields:
 * the official SDKs read only `error`, DashScope clients only the top level.
 */
function providerBody(code: string, message: string, type: string, requestId: string) {
  return { code, message, request_id: requestId, error: { message, type, code } };
}

/**
 * Turns upstream failures into catalogue errors; the provider's text is kept, and so is its
 * `Retry-After`, so a client backs off as long as the vendor asked.
 */
export function toGatewayError(error: unknown, requestId: string): GatewayError {
  if (GatewayError.isInstance(error)) return error;
  if (UpstreamError.isInstance(error)) {
    const headers =
      error.retryAfterSeconds === undefined
        ? undefined
        : { "retry-after": String(error.retryAfterSeconds) };
    if (error.kind === "timeout") return new GatewayError("upstream_timeout", {}, { cause: error });
    if (error.kind === "too_large")
      return new GatewayError(
        "upstream_response_too_large",
        { detail: error.message },
        { cause: error },
      );
    const status = error.status;
    if (status === 429)
      return new GatewayError(
        "upstream_rate_limited",
        { detail: error.message },
        { cause: error, headers },
      );
    if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403) {
      return new GatewayError(
        "upstream_rejected",
        { detail: error.message },
        {
          status,
          providerCode: error.vendorCode,
          param: vendorParam(error.body),
          cause: error,
          headers,
        },
      );
    }
    return new GatewayError("upstream_error", { detail: error.message }, { cause: error, headers });
  }
  return new GatewayError("internal_error", { requestId }, { cause: error });
}

/** The field an OpenAI-style vendor error names (`{error: {param}}`), passed on with its refusal. */
function vendorParam(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
  const inner = body.error;
  if (typeof inner !== "object" || inner === null || !("param" in inner)) return undefined;
  return typeof inner.param === "string" ? inner.param : undefined;
}

export function renderError(
  error: unknown,
  dialect: ErrorDialect,
  requestId: string,
): RenderedError {
  const gatewayError = toGatewayError(error, requestId);
  const { code, message, type, param } = gatewayError;
  const headers = { ...gatewayError.headers };
  // Every authentication failure names the scheme, whichever layer raised it.
  if (code === "invalid_api_key" && headers["www-authenticate"] === undefined)
    headers["www-authenticate"] = BEARER_CHALLENGE;
  let status = gatewayError.status;
  let body: Record<string, unknown>;

  if (dialect === "anthropic") {
    body = {
      type: "error",
      error: {
        type: ANTHROPIC_CONFIGURATION_CODES.has(code)
          ? "api_error"
          : (ANTHROPIC_TYPES[status] ?? "api_error"),
        message,
        // Where Anthropic puts a stable cause; its SDKs expose it as `errorCode`.
        details: { error_code: gatewayError.providerCode ?? code },
      },
      request_id: requestId,
    };
  } else if (code === "insufficient_balance") {
    body = { error: { message } };
  } else if (
    code === "rate_limited" ||
    code === "token_rate_limited" ||
    code === "concurrency_limited"
  ) {
    body = providerBody("Throttling.RateQuota", message, type, requestId);
  } else if (dialect === "provider" && code !== "invalid_api_key") {
    if (PROVIDER_INVALID_PARAMETER.has(code)) status = 400;
    const providerCode = gatewayError.providerCode ?? PROVIDER_CODES[code] ?? code;
    body = providerBody(providerCode, message, type, requestId);
  } else {
    const rendered: Record<string, unknown> = {
      message,
      type,
      code: gatewayError.providerCode ?? code,
    };
    if (param !== undefined) rendered.param = param;
    body = { error: rendered };
  }
  return { status, headers, body, code };
}
