/**
 * @module test/support/expect-error
 * Asserts that a response is a gateway-style error: exact status, `type` and `code`, the
 * `{"error":{"message","type","code"[,"param"]}}` shape and nothing else (no Fastify default
 * body, no stack trace), and an `x-request-id` header of the gateway's form.
 */
import { expect } from "vitest";

export interface ExpectedError {
  status: number;
  type: string;
  code: string;
  /** Checked when present; `null` means the body must not carry `param`. */
  param?: string | null;
}

export interface GatewayErrorBody {
  message: string;
  type: string;
  code: string;
  param?: string;
}

export async function expectGatewayError(
  response: Response,
  expected: ExpectedError,
): Promise<GatewayErrorBody> {
  const text = await response.text();
  expect(response.status, text).toBe(expected.status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{20}$/);
  expect(text).not.toMatch(/statusCode|FST_|\bstack\b|\n\s+at /);
  const body = JSON.parse(text) as { error: GatewayErrorBody };
  expect(Object.keys(body)).toEqual(["error"]);
  const keys = Object.keys(body.error);
  expect(
    keys.every((key) => ["message", "type", "code", "param"].includes(key)),
    text,
  ).toBe(true);
  expect(body.error.type).toBe(expected.type);
  expect(body.error.code).toBe(expected.code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  if (expected.param === null) expect(keys).not.toContain("param");
  else if (expected.param !== undefined) expect(body.error.param).toBe(expected.param);
  return body.error;
}

/** The 401 every authentication failure answers with. */
export async function expectInvalidKey(response: Response): Promise<void> {
  expect(response.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  await expectGatewayError(response, {
    status: 401,
    type: "invalid_request_error",
    code: "invalid_api_key",
    param: null,
  });
}
