import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildSandboxApp, type RunningSandbox, SandboxState, startSandbox } from "./server.ts";
import { REQUEST_LOG_CAPACITY } from "./state.ts";
import { AUTH_HEADERS, chatBody, postChat } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

async function getJson(path: string): Promise<unknown> {
  return (await fetch(`${sandbox.url}${path}`)).json();
}

describe("/__sandbox endpoints", () => {
  it("counts vendor requests but not admin calls", async () => {
    expect(sandbox.url).toBe(`http://127.0.0.1:${sandbox.port}`);
    await postChat(sandbox.url, chatBody("one"));
    await postChat(sandbox.url, chatBody("two"), { headers: { authorization: "" } });
    await getJson("/__sandbox/stats");
    const stats = await getJson("/__sandbox/stats");
    expect(stats).toEqual({ requests: 2, completed: 2, aborted: 0, dropped: 0, open: 0 });
    expect(sandbox.stats()).toEqual(stats);
  });

  it("logs received requests, newest last, limited by ?limit", async () => {
    await postChat(sandbox.url, chatBody("first"));
    await postChat(sandbox.url, chatBody("second"), {
      path: "/deepseek/v1/chat/completions?trace=1",
      headers: { "x-sandbox-fault": "words=2" },
    });
    const all = (await getJson("/__sandbox/requests")) as {
      requests: Array<Record<string, unknown>>;
    };
    expect(all.requests).toHaveLength(2);
    const last = (await getJson("/__sandbox/requests?limit=1")) as typeof all;
    expect(last.requests).toHaveLength(1);
    const [entry] = last.requests;
    expect(entry?.method).toBe("POST");
    expect(entry?.path).toBe("/deepseek/v1/chat/completions");
    expect(entry?.body).toEqual(chatBody("second"));
    expect(entry?.headers).toMatchObject({
      "x-sandbox-fault": "words=2",
      authorization: "Bearer sk-test",
    });
    expect(typeof entry?.at === "string" && !Number.isNaN(Date.parse(entry.at))).toBe(true);
    const bad = await fetch(`${sandbox.url}/__sandbox/requests?limit=abc`);
    expect(bad.status).toBe(400);
  });

  it("reset clears the log and counters", async () => {
    await postChat(sandbox.url, chatBody("x"));
    const reset = await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
    expect(await reset.json()).toEqual({ reset: true });
    expect(await getJson("/__sandbox/requests")).toEqual({ requests: [] });
    expect(sandbox.stats()).toEqual({ requests: 0, completed: 0, aborted: 0, dropped: 0, open: 0 });
  });
});

describe("vendor-shaped errors", () => {
  it("answers unknown paths with a 404 error body", async () => {
    const response = await fetch(`${sandbox.url}/openai/v1/embeddingz`, { method: "POST" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: "Unknown sandbox path (POST /openai/v1/embeddingz)",
        type: "invalid_request_error",
        param: null,
        code: "not_found",
      },
    });
    const get = await fetch(`${sandbox.url}/openai/v1/chat/completions`);
    expect(get.status).toBe(404);
  });

  it("answers unparseable JSON with OpenAI's 400 body", async () => {
    const response = await fetch(`${sandbox.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: AUTH_HEADERS,
      body: "{not json",
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error.message).toMatch(/^We could not parse the JSON body of your request\./);
    expect(body.error.type).toBe("invalid_request_error");
  });
});

describe("in-process use", () => {
  it("buildSandboxApp serves requests via inject and shares the given state", async () => {
    const state = new SandboxState();
    const app = buildSandboxApp({ state });
    const response = await app.inject({
      method: "POST",
      url: "/dashscope/compatible-mode/v1/chat/completions",
      headers: AUTH_HEADERS,
      payload: chatBody("inject", { model: "qwen-plus" }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ model: "qwen-plus", object: "chat.completion" });
    expect(state.recent()).toHaveLength(1);
    expect(state.stats().requests).toBe(1);
    await app.close();
  });

  it("keeps a ring buffer of the last 200 requests", () => {
    const state = new SandboxState();
    for (let i = 0; i < REQUEST_LOG_CAPACITY + 5; i++) {
      state.record({ method: "POST", path: `/r/${i}`, headers: {}, body: null, at: "" });
    }
    const recent = state.recent();
    expect(recent).toHaveLength(200);
    expect(recent[0]?.path).toBe("/r/5");
    expect(recent.at(-1)?.path).toBe("/r/204");
    expect(state.recent(2).map((entry) => entry.path)).toEqual(["/r/203", "/r/204"]);
    expect(state.recent(0)).toEqual([]);
  });
});
