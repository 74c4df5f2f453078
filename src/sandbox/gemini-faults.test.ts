import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { googleErrorForStatus } from "./gemini-errors.ts";
import { type RunningSandbox, type SandboxStats, startSandbox } from "./server.ts";
import { readAll, waitFor } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

const PATH = "/gemini/v1beta/models/gemini-2.5-flash";
const body = (text: string) => ({ contents: [{ role: "user", parts: [{ text }] }] });

function call(
  method: string,
  payload: unknown,
  options: { fault?: string; faultKey?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${sandbox.url}${PATH}:${method}`, {
    method: "POST",
    headers: {
      "x-goog-api-key": "k",
      "content-type": "application/json",
      ...(options.fault ? { "x-sandbox-fault": options.fault } : {}),
      ...(options.faultKey ? { "x-sandbox-fault-key": options.faultKey } : {}),
    },
    body: JSON.stringify(payload),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

const stream = (payload: unknown, options: Parameters<typeof call>[2] = {}) =>
  call("streamGenerateContent?alt=sse", payload, options);

const frames = (text: string) => text.split("\r\n\r\n").filter((frame) => frame !== "");

async function stats(): Promise<SandboxStats> {
  return (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as SandboxStats;
}

describe("status faults", () => {
  it("answers Google's envelope with the status name for each code", async () => {
    const cases: Array<[number, string]> = [
      [400, "INVALID_ARGUMENT"],
      [403, "PERMISSION_DENIED"],
      [404, "NOT_FOUND"],
      [429, "RESOURCE_EXHAUSTED"],
      [500, "INTERNAL"],
      [503, "UNAVAILABLE"],
      [504, "DEADLINE_EXCEEDED"],
    ];
    for (const [status, name] of cases) {
      const response = await call("generateContent", body(`[[sandbox:status=${status}]] x`));
      expect(response.status).toBe(status);
      const error = (await response.json()) as { error: { code: number; status: string } };
      expect(error).toEqual(googleErrorForStatus(status));
      expect(error.error).toMatchObject({ code: status, status: name });
    }
  });

  it("sends retry-after, lets the header win, and rejects bad specs", async () => {
    const limited = await call("generateContent", body("x"), { fault: "status=429;retry-after=2" });
    expect(limited.headers.get("retry-after")).toBe("2");
    const overridden = await call("generateContent", body("[[sandbox:status=500]] x"), {
      fault: "words=3",
    });
    const json = (await overridden.json()) as {
      candidates: Array<{ content: { parts: Array<{ text: string }> } }>;
    };
    expect(json.candidates[0]?.content.parts[0]?.text).toBe("Sandbox reply to");
    const bad = await call("generateContent", body("x"), { fault: "explode=1" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        code: 400,
        message: "Invalid sandbox fault spec 'explode=1': unknown sandbox fault 'explode'.",
        status: "INVALID_ARGUMENT",
      },
    });
  });

  it("fails only the first n requests with fail-times", async () => {
    const options = { fault: "fail-times=1", faultKey: "gemini-retry" };
    expect((await call("generateContent", body("x"), options)).status).toBe(503);
    expect((await call("generateContent", body("x"), options)).status).toBe(200);
  });

  it("applies status faults to countTokens too", async () => {
    const response = await call("countTokens", body("x"), { fault: "status=403" });
    expect(response.status).toBe(403);
  });
});

describe("content faults", () => {
  it("drops usage with no-usage and reports cached tokens", async () => {
    const bare = (await (
      await call("generateContent", body("a b c"), { fault: "no-usage" })
    ).json()) as Record<string, unknown>;
    expect(bare.usageMetadata).toBeUndefined();
    const streamed = await readAll(await stream(body("a b c"), { fault: "no-usage" }));
    expect(streamed.text).not.toContain("usageMetadata");
    const cached = (await (
      await call("generateContent", body("a b c"), { fault: "cached-tokens=2" })
    ).json()) as {
      usageMetadata: Record<string, number>;
    };
    expect(cached.usageMetadata.cachedContentTokenCount).toBe(2);
    expect(cached.usageMetadata.promptTokenCount).toBe(3);
  });

  it("cuts a non-stream answer with drop, and sends half a body with malformed", async () => {
    const before = await stats();
    await expect(call("generateContent", body("x"), { fault: "drop=0" })).rejects.toThrow();
    await waitFor(async () => (await stats()).dropped > before.dropped);
    const malformed = await call("generateContent", body("x"), { fault: "malformed=0" });
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();
  });
});

describe("stream faults", () => {
  it("cuts the stream after n frames with drop, before the finishing chunk at most", async () => {
    const two = await readAll(await stream(body("x"), { fault: "drop=2" }));
    expect(frames(two.text)).toHaveLength(2);
    expect(two.error).toBeDefined();
    const late = await readAll(await stream(body("x"), { fault: "drop=100" }));
    expect(late.text).not.toContain("finishReason");
    expect(late.error).toBeDefined();
  });

  it("sends one non-JSON frame with malformed, in both framings", async () => {
    const sse = await readAll(await stream(body("x"), { fault: "malformed=1" }));
    const [first, second, ...rest] = frames(sse.text);
    expect(JSON.parse(first?.replace(/^data: /, "") ?? "")).toHaveProperty("candidates");
    expect(() => JSON.parse(second?.replace(/^data: /, "") ?? "")).toThrow();
    expect(rest).toEqual([]);
    const array = await readAll(
      await call("streamGenerateContent", body("x"), { fault: "malformed=1" }),
    );
    expect(array.text.startsWith("[{")).toBe(true);
    expect(() => JSON.parse(array.text)).toThrow();
  });

  it("counts a client that leaves a slow stream or a hang as aborted", async () => {
    const before = await stats();
    const controller = new AbortController();
    const response = await stream(body("x"), {
      fault: "chunk-delay=50;words=60",
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await waitFor(async () => (await stats()).aborted > before.aborted);
    const hang = new AbortController();
    const pending = call("generateContent", body("x"), { fault: "hang", signal: hang.signal });
    await waitFor(async () => (await stats()).open > 0);
    hang.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(async () => (await stats()).aborted > before.aborted + 1);
  });

  it("delays the answer with delay", async () => {
    const started = performance.now();
    await call("generateContent", body("x"), { fault: "delay=150" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});
