import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, dataFrames, postChat, readAll, waitFor } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

const fault = (spec: string) => ({ headers: { "x-sandbox-fault": spec } });
const streamBody = (text: string, extra: Record<string, unknown> = {}) =>
  chatBody(text, { stream: true, ...extra });

describe("status faults", () => {
  it("answers the injected status with OpenAI's error body and retry-after", async () => {
    const overloaded = await postChat(sandbox.url, chatBody("hi"), fault("status=503"));
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers.get("retry-after")).toBeNull();
    expect(await overloaded.json()).toEqual({
      error: {
        message: "The engine is currently overloaded, please try again later.",
        type: "server_error",
        param: null,
        code: "service_unavailable",
      },
    });
    const limited = await postChat(sandbox.url, chatBody("hi"), fault("status=429;retry-after=1"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await limited.json()) as { error: { code: string; type: string } };
    expect(body.error.code).toBe("rate_limit_exceeded");
    const bad = await postChat(sandbox.url, chatBody("hi"), fault("status=422"));
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBe(
      "invalid_request_error",
    );
  });

  it("reads directives from message text, and the header wins over them", async () => {
    const directed = await postChat(sandbox.url, chatBody("please fail [[sandbox:status=500]]"));
    expect(directed.status).toBe(500);
    expect(((await directed.json()) as { error: { type: string } }).error.type).toBe(
      "server_error",
    );
    const overridden = await postChat(
      sandbox.url,
      chatBody("please fail [[sandbox:status=500]]"),
      fault("words=3"),
    );
    expect(overridden.status).toBe(200);
    const json = (await overridden.json()) as { choices: Array<{ message: { content: string } }> };
    expect(json.choices[0]?.message.content).toBe("Sandbox reply to");
  });

  it("rejects an invalid fault spec with 400", async () => {
    const response = await postChat(sandbox.url, chatBody("hi"), fault("stauts=503"));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message: "Invalid sandbox fault spec 'stauts=503': unknown sandbox fault 'stauts'.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_sandbox_fault",
      },
    });
  });
});

describe("timing faults", () => {
  it("delays the response headers", async () => {
    const started = Date.now();
    const response = await postChat(sandbox.url, chatBody("slow"), fault("delay=300"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(response.status).toBe(200);
  });

  it("waits between stream chunks", async () => {
    const started = Date.now();
    const response = await postChat(
      sandbox.url,
      streamBody("slow"),
      fault("chunk-delay=60;words=6"),
    );
    const { text } = await readAll(response);
    // role + 2 content + finish + [DONE] = 5 frames, 4 gaps
    expect(dataFrames(text)).toHaveLength(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(235);
  });

  it("hangs until the client aborts, counting the request as aborted", async () => {
    const controller = new AbortController();
    const pending = postChat(sandbox.url, chatBody("wait forever"), {
      ...fault("hang"),
      signal: controller.signal,
    });
    await waitFor(() => sandbox.stats().open === 1);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await waitFor(() => sandbox.stats().aborted === 1);
    const stats = await (await fetch(`${sandbox.url}/__sandbox/stats`)).json();
    expect(stats).toEqual({ requests: 1, completed: 0, aborted: 1, dropped: 0, open: 0 });
    expect(sandbox.stats()).toEqual(stats);
  });
});

describe("connection faults", () => {
  it("drops a non-stream request without any response", async () => {
    await expect(postChat(sandbox.url, chatBody("drop me"), fault("drop=0"))).rejects.toThrow(
      /fetch failed/,
    );
    await waitFor(() => sandbox.stats().dropped === 1);
    expect(sandbox.stats()).toMatchObject({ requests: 1, aborted: 0, completed: 0, open: 0 });
  });

  it("drops a stream after n data frames, without [DONE]", async () => {
    const response = await postChat(sandbox.url, streamBody("cut me"), fault("drop=2"));
    expect(response.status).toBe(200);
    const { text, error } = await readAll(response);
    expect(error).toBeInstanceOf(Error);
    const frames = dataFrames(text);
    expect(frames).toHaveLength(2);
    expect(frames).not.toContain("[DONE]");
    expect(JSON.parse(frames[1] ?? "").choices[0].delta.content).toBe("Sandbox reply to");
    await waitFor(() => sandbox.stats().dropped === 1);
  });

  it("sends a malformed frame after n frames, then ends the stream", async () => {
    const response = await postChat(sandbox.url, streamBody("break me"), fault("malformed=2"));
    const { text, error } = await readAll(response);
    expect(error).toBeUndefined();
    const frames = dataFrames(text);
    expect(frames).toHaveLength(3);
    expect(() => JSON.parse(frames[2] ?? "")).toThrow(SyntaxError);
    expect(frames[2]?.startsWith('{"id":"chatcmpl-')).toBe(true);
    expect(text).not.toContain("[DONE]");
    await waitFor(() => sandbox.stats().completed === 1);
  });
});
