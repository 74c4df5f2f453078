import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { UpstreamResponse } from "../kit/http-client.ts";
import { isRetryableGeminiStatus, readGeminiError, readGeminiErrorFields } from "./gemini-error.ts";

function response(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): UpstreamResponse {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const stream = Readable.from([Buffer.from(text)]);
  return {
    status,
    headers,
    body: Object.assign(stream, {
      text: async () => text,
      json: async () => JSON.parse(text) as unknown,
      destroy: () => stream.destroy(),
    }),
  } as UpstreamResponse;
}

const envelope = (code: number, status: string, message = "boom") => ({
  error: { code, message, status },
});

describe("readGeminiErrorFields", () => {
  it("reads the message and status name, also from an array envelope", () => {
    expect(readGeminiErrorFields(envelope(400, "INVALID_ARGUMENT", "bad"))).toEqual({
      message: "bad",
      code: "INVALID_ARGUMENT",
    });
    expect(readGeminiErrorFields([envelope(429, "RESOURCE_EXHAUSTED", "slow")])).toEqual({
      message: "slow",
      code: "RESOURCE_EXHAUSTED",
    });
    expect(readGeminiErrorFields({ nope: 1 })).toEqual({});
  });
});

describe("readGeminiError", () => {
  it("keeps status, body, code and retry-after", async () => {
    const error = await readGeminiError(
      response(429, envelope(429, "RESOURCE_EXHAUSTED", "Quota"), { "retry-after": "3" }),
    );
    expect(error).toMatchObject({
      kind: "http",
      status: 429,
      message: "Quota",
      vendorCode: "RESOURCE_EXHAUSTED",
      retryable: true,
      body: envelope(429, "RESOURCE_EXHAUSTED", "Quota"),
    });
    expect(error.retryAfterSeconds).toBe(3);
  });

  it("decides retries by the status name before the HTTP code", async () => {
    expect((await readGeminiError(response(500, envelope(500, "INTERNAL")))).retryable).toBe(true);
    expect((await readGeminiError(response(503, envelope(503, "UNAVAILABLE")))).retryable).toBe(
      true,
    );
    expect(
      (await readGeminiError(response(400, envelope(400, "INVALID_ARGUMENT")))).retryable,
    ).toBe(false);
    expect((await readGeminiError(response(500, envelope(500, "NOT_FOUND")))).retryable).toBe(
      false,
    );
    expect((await readGeminiError(response(502, "<html>bad gateway</html>"))).retryable).toBe(true);
    expect(isRetryableGeminiStatus("ABORTED")).toBeUndefined();
  });
});
