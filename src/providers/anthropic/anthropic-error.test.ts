import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import type { UpstreamResponse } from "../kit/http-client.ts";
import {
  anthropicStreamError,
  readAnthropicError,
  readAnthropicErrorFields,
} from "./anthropic-error.ts";

function response(
  status: number,
  body: string,
  headers: Record<string, string> = {},
): UpstreamResponse {
  return {
    status,
    headers,
    body: Object.assign((async function* () {})(), {
      text: async () => body,
      json: async () => JSON.parse(body) as unknown,
      destroy: () => {},
    }),
  };
}

const envelope = (type: string, message: string) =>
  JSON.stringify({ type: "error", error: { type, message }, request_id: "req_011CX" });

describe("readAnthropicErrorFields", () => {
  it("reads the message and the error type as the vendor code", () => {
    expect(readAnthropicErrorFields(JSON.parse(envelope("invalid_request_error", "bad")))).toEqual({
      message: "bad",
      code: "invalid_request_error",
    });
    expect(readAnthropicErrorFields({ message: "other shape" })).toEqual({});
  });
});

describe("readAnthropicError", () => {
  it("keeps status, message, vendor code, body and the request-id header", async () => {
    const error = await readAnthropicError(
      response(400, envelope("invalid_request_error", "max_tokens: Field required"), {
        "request-id": "req_011CX",
      }),
    );
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      kind: "http",
      status: 400,
      message: "max_tokens: Field required",
      vendorCode: "invalid_request_error",
      upstreamRequestId: "req_011CX",
      retryable: false,
    });
  });

  it("retries 529 and overloaded_error, and keeps retry-after", async () => {
    expect(
      (await readAnthropicError(response(529, envelope("overloaded_error", "Overloaded"))))
        .retryable,
    ).toBe(true);
    const oddStatus = await readAnthropicError(
      response(400, envelope("overloaded_error", "Overloaded")),
    );
    expect(oddStatus).toMatchObject({
      status: 400,
      retryable: true,
      vendorCode: "overloaded_error",
    });
    const limited = await readAnthropicError(
      response(429, envelope("rate_limit_error", "slow down"), { "retry-after": "7" }),
    );
    expect(limited.retryable).toBe(true);
    expect(limited.retryAfterSeconds).toBe(7);
  });

  it("keeps a non-JSON body as text", async () => {
    const error = await readAnthropicError(response(502, "<html>Bad gateway</html>"));
    expect(error).toMatchObject({
      status: 502,
      message: "<html>Bad gateway</html>",
      retryable: true,
    });
  });
});

describe("anthropicStreamError", () => {
  it("turns a mid-stream error event into an UpstreamError", () => {
    const error = anthropicStreamError(
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      "req_1",
    );
    expect(error).toMatchObject({
      kind: "http",
      status: undefined,
      message: "Overloaded",
      vendorCode: "overloaded_error",
      upstreamRequestId: "req_1",
      retryable: true,
    });
    expect(
      anthropicStreamError({ type: "error", error: { type: "invalid_request_error" } }).retryable,
    ).toBe(false);
  });
});
