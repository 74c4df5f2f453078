/**
 * Every value an answer's headers carry is one Node can write, whatever a vendor or client put
 * in it: a header Node refuses fails the answer after it was charged.
 */
import { validateHeaderValue } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headerValue } from "./response-headers.ts";

describe("headerValue", () => {
  it("keeps printable ASCII as it is", () => {
    expect(headerValue("qwen3-tts-flash; v=2")).toBe("qwen3-tts-flash; v=2");
  });

  it("percent-encodes anything else, lone surrogates included", () => {
    expect(headerValue("模型")).toBe(encodeURIComponent("模型"));
    expect(headerValue("a\r\nset-cookie: x")).toBe("a%0D%0Aset-cookie%3A%20x");
    expect(headerValue("x\uD800y")).toBe(`x${encodeURIComponent("\uFFFD")}y`);
  });

  it("gives a value Node writes, for any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (value) => {
        expect(() => validateHeaderValue("x-test", headerValue(value))).not.toThrow();
      }),
    );
  });
});
