/**
 * @module errors/catalogue
 * Every error the gateway can answer with: a stable code, its HTTP status, the OpenAI-style
 * `type`, and a message template. Renderers for each wire dialect live in `src/http`.
 * `docs/errors.md` documents each entry; keep the two in step.
 */

export interface ErrorDefinition {
  status: number;
  /** OpenAI-style error type used by the gateway dialect. */
  type: string;
  /** Message template; `{name}` slots are filled from the error's params. */
  message: string;
}

export const ERROR_CATALOGUE = {
  // Authentication and permission
  invalid_api_key: {
    status: 401,
    type: "invalid_request_error",
    message: "Invalid API key. Send `Authorization: Bearer sk-...` with a key from your account.",
  },
  invalid_credentials: {
    status: 401,
    type: "invalid_request_error",
    message: "Email or password is wrong.",
  },
  account_suspended: {
    status: 403,
    type: "permission_error",
    message:
      "This account is suspended: its keys and sessions are refused. Contact the operator of this gateway.",
  },
  admin_required: {
    status: 403,
    type: "permission_error",
    message:
      "This endpoint needs an admin account's login session or one of its own keys (not a key minted by a key).",
  },
  model_not_allowed: {
    status: 403,
    type: "permission_error",
    message: "This API key is not allowed to use the model '{model}'.",
  },
  registration_disabled: {
    status: 403,
    type: "permission_error",
    message: "Self-service registration is switched off on this gateway.",
  },

  // Request shape
  invalid_json: {
    status: 400,
    type: "invalid_request_error",
    message: "The request body is not valid JSON: {detail}",
  },
  json_too_deep: {
    status: 400,
    type: "invalid_request_error",
    message: "The request body nests objects and arrays more than {limit} levels deep.",
  },
  json_too_many_values: {
    status: 400,
    type: "invalid_request_error",
    message: "The request body holds more than {limit} JSON values.",
  },
  request_timeout: {
    status: 408,
    type: "invalid_request_error",
    message: "The request was not received in time; the connection is closed.",
  },
  headers_too_large: {
    status: 431,
    type: "invalid_request_error",
    message: "The request headers are too large.",
  },
  unsupported_media_type: {
    status: 415,
    type: "invalid_request_error",
    message: "Unsupported Content-Type '{contentType}'. Send application/json.",
  },
  request_too_large: {
    status: 413,
    type: "invalid_request_error",
    message: "The request body exceeds the limit of {limit} bytes.",
  },
  invalid_request: { status: 400, type: "invalid_request_error", message: "{detail}" },
  invalid_parameter: { status: 400, type: "invalid_request_error", message: "{detail}" },
  missing_parameter: {
    status: 400,
    type: "invalid_request_error",
    message: "Missing required parameter: '{param}'.",
  },
  unsupported_parameter: {
    status: 400,
    type: "invalid_request_error",
    message: "Unsupported parameter: '{param}' {detail}",
  },
  not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "Unknown path: {method} {path}",
  },
  method_not_allowed: {
    status: 405,
    type: "invalid_request_error",
    message: "{method} is not allowed on {path}.",
  },

  // Models and catalog
  model_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "The model '{model}' does not exist or is not served by this gateway.{suggestion}",
  },
  endpoint_model_mismatch: {
    status: 400,
    type: "invalid_request_error",
    message:
      "The model '{model}' serves the '{actual}' endpoint kind and cannot be used on {path}.",
  },

  // Images (`/v1/images/edits`, and `imgmodel` generations)
  invalid_json_schema: {
    status: 400,
    type: "invalid_request_error",
    message: "Invalid schema for the structured output: {detail}",
  },
  invalid_image_format: {
    status: 400,
    type: "invalid_request_error",
    message: "The file '{filename}' is {actual}; {model} accepts {accepted}.",
  },
  invalid_image: { status: 400, type: "invalid_request_error", message: "{detail}" },
  invalid_mask: { status: 400, type: "invalid_request_error", message: "{detail}" },
  mask_not_supported: {
    status: 400,
    type: "invalid_request_error",
    message:
      "The model '{model}' does not support masks (local editing); send the edit without 'mask'.",
  },
  too_many_images: {
    status: 400,
    type: "invalid_request_error",
    message: "The model '{model}' takes at most {max} image(s) per edit; {count} were sent.",
  },
  unsupported_size: {
    status: 400,
    type: "invalid_request_error",
    message: "The size '{size}' is not supported by {model} here; use {allowed}.",
  },

  // Accounts and keys
  account_exists: {
    status: 409,
    type: "invalid_request_error",
    message: "An account with this email already exists.",
  },
  account_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "Account '{id}' does not exist.",
  },
  key_limit_reached: {
    status: 409,
    type: "invalid_request_error",
    message:
      "This account has {max} API keys, the most it may create itself (revoked keys count: they stay listed). An administrator can create more for it, or raise auth.max_keys_per_account.",
  },
  key_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "API key '{id}' does not exist.",
  },
  response_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "Response with id '{id}' not found.",
  },
  previous_response_not_found: {
    status: 400,
    type: "invalid_request_error",
    message: "Previous response with id '{id}' not found.",
  },
  task_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "Video task '{id}' does not exist.",
  },
  task_not_cancelable: {
    status: 409,
    type: "invalid_request_error",
    message: "Video task '{id}' cannot be canceled: {detail}",
  },
  credit_code_invalid: {
    status: 400,
    type: "invalid_request_error",
    message:
      "This credit code is not valid: it does not exist, was revoked or has expired. Check it for typos.",
  },
  credit_code_redeemed: {
    status: 409,
    type: "invalid_request_error",
    message: "This credit code has already been redeemed.",
  },
  credit_code_not_found: {
    status: 404,
    type: "invalid_request_error",
    message: "Credit code '{id}' does not exist.",
  },
  idempotency_conflict: {
    status: 409,
    type: "invalid_request_error",
    message:
      "Idempotency-Key '{key}' was used for a different request body; use a new key for a new request.",
  },

  // Billing and quotas
  balance_limit_exceeded: {
    status: 400,
    type: "invalid_request_error",
    message:
      "A credit of {amount} micro-USD would raise the balance of {balance} above the maximum of {max} micro-USD (billing.max_balance_micros).",
  },
  debit_exceeds_available: {
    status: 400,
    type: "invalid_request_error",
    message:
      "A debit of {amount} micro-USD exceeds the {available} micro-USD available (the balance less what requests in flight hold).",
  },
  insufficient_balance: {
    status: 402,
    type: "insufficient_balance",
    message:
      "Insufficient balance: this request may cost up to {required} micro-USD and {available} are available.",
  },
  key_spend_limit_reached: {
    status: 402,
    type: "spend_limit_reached",
    message:
      "{subject} of {limit} is reached; {reset}. ({used} spent or held this period; this request may cost up to {required}.)",
  },
  rate_limited: {
    status: 429,
    type: "rate_limit_error",
    message:
      "Requests rate limit exceeded: {holder} allows {limit} requests per minute{origin}; retry in {retry_after} s.",
  },
  token_rate_limited: {
    status: 429,
    type: "rate_limit_error",
    message:
      "Tokens per minute quota exceeded: {holder} allows {limit} tokens per minute{origin}; retry in {retry_after} s.",
  },
  concurrency_limited: {
    status: 429,
    type: "rate_limit_error",
    message:
      "Too many concurrent requests: {holder} allows {limit} at a time{origin}; retry when one finishes.",
  },
  too_many_attempts: {
    status: 429,
    type: "rate_limit_error",
    message: "Too many {action} attempts; retry in {retryAfter} seconds.",
  },

  // Upstream
  upstream_error: {
    status: 502,
    type: "upstream_error",
    message: "The upstream provider failed: {detail}",
  },
  upstream_rate_limited: {
    status: 429,
    type: "rate_limit_error",
    message: "The upstream provider is rate limiting this gateway: {detail}",
  },
  upstream_rejected: { status: 400, type: "invalid_request_error", message: "{detail}" },
  upstream_timeout: {
    status: 504,
    type: "upstream_error",
    message: "The upstream provider timed out.",
  },
  upstream_response_too_large: {
    status: 502,
    type: "upstream_error",
    message: "The upstream provider's answer is larger than this gateway reads: {detail}",
  },
  structured_output_invalid: {
    status: 502,
    type: "upstream_error",
    message: "The model's answer does not match the requested JSON schema: {detail}",
  },
  vendor_not_configured: {
    status: 503,
    type: "server_error",
    message:
      "The model '{model}' is not available on this gateway: no credential is configured for {vendor}. The operator enables it by setting {credential}.",
  },
  provider_not_configured: {
    status: 503,
    type: "server_error",
    message: "No route for model '{model}' is available on this gateway.",
  },
  upstream_unavailable: {
    status: 503,
    type: "server_error",
    message:
      "Every route of the model '{model}' is failing, so the gateway is not calling them for now; retry in {seconds} s.",
  },

  // Server
  quota_unavailable: {
    status: 503,
    type: "server_error",
    message:
      "Quotas cannot be checked right now (the shared counter store is unreachable); retry shortly.",
  },
  store_unavailable: {
    status: 503,
    type: "server_error",
    message: "The gateway's database is unavailable; retry shortly.",
  },
  request_abandoned: {
    status: 503,
    type: "server_error",
    message:
      "This request was given up for failed while the gateway serving it was cut off from its database, and was charged accordingly; its answer is not delivered. Retry it.",
  },
  shutting_down: {
    status: 503,
    type: "server_error",
    message: "The gateway is shutting down; retry shortly.",
  },
  internal_error: {
    status: 500,
    type: "server_error",
    message: "Internal error. Request id: {requestId}.",
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
