import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import type { HttpClient, UpstreamResponse } from "./http-client.ts";
import { getUpstream, postUpstream, readJsonObject } from "./upstream-call.ts";

function answer(text: string | Error, status = 200): UpstreamResponse {
  return {
    status,
    headers: {},
    body: Object.assign((async function* () {})(), {
      text: async () => {
        if (text instanceof Error) throw text;
        return text;
      },
      json: async () => JSON.parse(String(text)) as unknown,
      destroy: () => {},
    }),
  };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!UpstreamError.isInstance(error)) throw new Error(`expected an UpstreamError: ${error}`);
  return error;
}

const read = (body: Record<string, unknown>) => (body.list as string[]).map((item) => item.length);

describe("readJsonObject", () => {
  it("maps a JSON object", async () => {
    expect(await readJsonObject(answer('{"list":["ab","c"]}'), undefined, read)).toEqual([2, 1]);
  });

  it("turns every unreadable answer into a non-retryable protocol error", async () => {
    for (const text of [
      '{"list":["ab"',
      "<html>busy</html>",
      "null",
      "[1,2]",
      '"x"',
      '{"list":7}',
    ]) {
      const error = await failure(readJsonObject(answer(text), undefined, read));
      expect(error.kind, text).toBe("protocol");
      expect(error.retryable, text).toBe(false);
    }
  });

  it("maps a failed read to the matching upstream error", async () => {
    const cut = await failure(
      readJsonObject(answer(new Error("other side closed")), undefined, read),
    );
    expect(cut.kind).toBe("connect");
    const aborted = new AbortController();
    aborted.abort();
    const gone = await failure(readJsonObject(answer(new Error("aborted")), aborted.signal, read));
    expect(gone.kind).toBe("aborted");
  });
});

describe("postUpstream", () => {
  it("answers 2xx responses and reads the vendor's error otherwise", async () => {
    const client = (response: UpstreamResponse): HttpClient => ({
      post: async () => response,
      get: async () => response,
      download: () => Promise.reject(new Error("no downloads here")),
      withTimeouts: () => client(response),
      close: async () => {},
    });
    const ok = answer("{}");
    const readError = async (response: UpstreamResponse) =>
      new UpstreamError({ kind: "http", status: response.status, message: "refused" });
    expect(await postUpstream(client(ok), "http://x", { headers: {}, body: "{}", readError })).toBe(
      ok,
    );
    const refused = await failure(
      postUpstream(client(answer("{}", 400)), "http://x", { headers: {}, body: "{}", readError }),
    );
    expect(refused).toMatchObject({ kind: "http", status: 400, message: "refused" });
  });
});

describe("getUpstream", () => {
  it("sends a GET with the caller's headers and reads the vendor's error on non-2xx", async () => {
    const calls: { method: string; url: string; headers: Record<string, string> }[] = [];
    const client = (response: UpstreamResponse): HttpClient => ({
      post: async (url, init) => {
        calls.push({ method: "POST", url, headers: init.headers });
        return response;
      },
      get: async (url, init) => {
        calls.push({ method: "GET", url, headers: init.headers });
        return response;
      },
      download: () => Promise.reject(new Error("no downloads here")),
      withTimeouts: () => client(response),
      close: async () => {},
    });
    const readError = async (response: UpstreamResponse) =>
      new UpstreamError({ kind: "http", status: response.status, message: "unknown task" });
    const ok = answer("{}");
    const headers = { authorization: "Bearer k" };
    expect(await getUpstream(client(ok), "http://x/tasks/1", { headers, readError })).toBe(ok);
    expect(calls).toEqual([{ method: "GET", url: "http://x/tasks/1", headers }]);
    const refused = await failure(
      getUpstream(client(answer("{}", 404)), "http://x/tasks/2", { headers, readError }),
    );
    expect(refused).toMatchObject({ kind: "http", status: 404, message: "unknown task" });
    expect(calls.map((call) => call.method)).toEqual(["GET", "GET"]);
  });
});
