import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planChatReply } from "./chat-reply.ts";
import { parseChatRequest } from "./chat-request.ts";
import { malformedData } from "./openai-chat-stream.ts";
import { streamChunks } from "./openai-shapes.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, dataFrames, postChat, readAll } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      refusal?: null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments: string };
      }>;
    };
    finish_reason: string | null;
  }>;
  usage?: Record<string, unknown> | null;
}

async function stream(body: unknown): Promise<{ chunks: Chunk[]; frames: string[] }> {
  const response = await postChat(sandbox.url, body);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  const { text, error } = await readAll(response);
  expect(error).toBeUndefined();
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  const frames = dataFrames(text);
  const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame) as Chunk);
  return { chunks, frames };
}

async function nonStreamContent(body: Record<string, unknown>): Promise<unknown> {
  const response = await postChat(sandbox.url, { ...body, stream: false });
  return ((await response.json()) as { choices: Array<{ message: unknown }> }).choices[0]?.message;
}

describe("chat completion streams", () => {
  it("sends role chunk, content fragments, finish chunk and [DONE]", async () => {
    const body = chatBody("Stream me something", { stream: true });
    const { chunks, frames } = await stream(body);
    expect(frames.at(-1)).toBe("[DONE]");
    expect(chunks).toHaveLength(1 + 8 + 1); // 24 words, 3 per chunk
    const [first] = chunks;
    expect(first?.choices[0]?.delta).toEqual({ role: "assistant", content: "", refusal: null });
    for (const chunk of chunks) {
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.id).toBe(first?.id);
      expect(chunk.created).toBe(first?.created);
      expect(chunk.model).toBe("gpt-4o-mini");
      expect("usage" in chunk).toBe(false);
    }
    const fragments = chunks.slice(1, -1).map((chunk) => chunk.choices[0]?.delta.content ?? "");
    expect(fragments[1]).toMatch(/^ \S+ \S+ \S+$/);
    const last = chunks.at(-1);
    expect(last?.choices[0]?.delta).toEqual({});
    expect(last?.choices[0]?.finish_reason).toBe("stop");
    const message = (await nonStreamContent(body)) as { content: string };
    expect(fragments.join("")).toBe(message.content);
  });

  it("adds usage: null everywhere and a usage chunk only with include_usage", async () => {
    const body = chatBody("Count my tokens", {
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 7,
    });
    const { chunks } = await stream(body);
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toMatchObject({
      prompt_tokens: 3,
      completion_tokens: 7,
      total_tokens: 10,
    });
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("length");
    const content = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(content.split(" ")).toHaveLength(7);
  });

  it("streams a tool call: header chunk, argument fragments, tool_calls finish", async () => {
    const tool = {
      type: "function",
      function: {
        name: "search_docs",
        parameters: {
          type: "object",
          properties: { query: { type: "string" }, lang: { type: "string" } },
          required: ["query", "lang"],
        },
      },
    };
    const body = chatBody("Find the docs", { stream: true, tools: [tool] });
    const { chunks } = await stream(body);
    const header = chunks[0]?.choices[0]?.delta;
    expect(header?.role).toBe("assistant");
    expect(header?.tool_calls).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
        type: "function",
        function: { name: "search_docs", arguments: "" },
      },
    ]);
    const fragments = chunks.slice(1, -1).map((chunk) => {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      expect(Object.keys(call ?? {}).sort()).toEqual(["function", "index"]);
      expect(Object.keys(call?.function ?? {})).toEqual(["arguments"]);
      return call?.function.arguments ?? "";
    });
    expect(fragments.length).toBeGreaterThan(1);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
    const message = (await nonStreamContent(body)) as {
      tool_calls: Array<{ id: string; function: { arguments: string } }>;
    };
    expect(fragments.join("")).toBe(message.tool_calls[0]?.function.arguments);
    expect(header?.tool_calls?.[0]?.id).toBe(message.tool_calls[0]?.id);
    expect(JSON.parse(fragments.join(""))).toEqual({
      query: expect.stringMatching(/^[a-z]+/),
      lang: expect.stringMatching(/^[a-z]+/),
    });
  });

  it("works with the official openai client", async () => {
    const client = new OpenAI({ baseURL: `${sandbox.url}/openai/v1`, apiKey: "sk-test" });
    const params = {
      model: "gpt-4o",
      messages: [{ role: "user" as const, content: "SDK stream" }],
    };
    const response = await client.chat.completions.create({
      ...params,
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of response) {
      content += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    const plain = await client.chat.completions.create(params);
    expect(content).toBe(plain.choices[0]?.message.content);
    expect(usage?.completion_tokens).toBe(24);
    expect(usage?.total_tokens).toBe(plain.usage?.total_tokens);
  });
});

describe("streamChunks and malformedData", () => {
  it("renders one chunk per 3 tokens between role and finish chunks", () => {
    const parsed = parseChatRequest(chatBody("abc", { max_tokens: 7 }));
    if (!parsed.ok) throw new Error("bad request");
    const plan = planChatReply(parsed.request);
    const meta = { id: "chatcmpl-x", created: 1, model: "m", systemFingerprint: "fp_x" };
    const plain = streamChunks(meta, plan, { includeUsage: false, omitUsageChunk: false });
    expect(plain).toHaveLength(1 + 3 + 1);
    const withUsage = streamChunks(meta, plan, { includeUsage: true, omitUsageChunk: false });
    expect(withUsage).toHaveLength(6);
    expect(withUsage.at(-1)?.choices).toEqual([]);
    const omitted = streamChunks(meta, plan, { includeUsage: true, omitUsageChunk: true });
    expect(omitted).toHaveLength(5);
    expect(omitted.every((chunk) => chunk.usage === null)).toBe(true);
  });

  it("produces data that never parses as JSON", () => {
    expect(() => JSON.parse(malformedData({ id: "chatcmpl-1", choices: [] }))).toThrow();
    expect(() => JSON.parse(malformedData(undefined))).toThrow();
  });
});
