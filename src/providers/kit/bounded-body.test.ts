import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { boundedBody, declaredLength, type RawBody } from "./bounded-body.ts";

/** A raw body of these chunks that records how much of it was read and whether it was closed. */
function raw(chunks: string[]): RawBody & { read: number; destroyed: boolean } {
  const body = {
    read: 0,
    destroyed: false,
    destroy() {
      body.destroyed = true;
    },
    async *[Symbol.asyncIterator]() {
      try {
        for (const chunk of chunks) {
          body.read++;
          yield Buffer.from(chunk);
        }
      } finally {
        body.destroyed = true;
      }
    },
  };
  return body;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!UpstreamError.isInstance(error)) throw new Error(`expected an UpstreamError: ${error}`);
  return error;
}

describe("boundedBody", () => {
  it("reads a body up to the limit, as text, JSON or chunks", async () => {
    expect(await boundedBody(raw(['{"a"', ":1}"]), 7, undefined).json()).toEqual({ a: 1 });
    expect(await boundedBody(raw(["h\u00e9", "llo"]), 100, 6).text()).toBe("héllo");
  });

  it("stops reading past the limit and fails with too_large", async () => {
    const source = raw(["12345", "67890", "abcde", "fghij"]);
    const error = await failure(boundedBody(source, 8, undefined).text());
    expect(error.kind).toBe("too_large");
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("8 bytes");
    expect(source.read).toBe(2);
    expect(source.destroyed).toBe(true);
  });

  it("fails before reading anything when content-length is over the limit", async () => {
    const source = raw(["x".repeat(10)]);
    const error = await failure(boundedBody(source, 8, 10, "stream").text());
    expect(error.message).toContain("stream");
    expect(source.read).toBe(0);
    expect(source.destroyed).toBe(true);
  });

  it("bounds iteration too", async () => {
    const body = boundedBody(raw(["abc", "def", "ghi"]), 5, undefined);
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of body) seen.push(chunk.toString());
      })(),
    );
    expect(error.kind).toBe("too_large");
    expect(seen).toEqual(["abc"]);
  });

  it("reads content-length defensively", () => {
    expect(declaredLength("42")).toBe(42);
    expect(declaredLength(["7", "8"])).toBe(7);
    expect(declaredLength("4x")).toBeUndefined();
    expect(declaredLength(undefined)).toBeUndefined();
  });
});
