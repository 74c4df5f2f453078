import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { readAll } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

interface GeminiBody {
  candidates: Array<{
    content: {
      role: string;
      parts: Array<{ text?: string; thought?: boolean; functionCall?: { name: string } }>;
    };
    finishReason?: string;
  }>;
  usageMetadata?: Record<string, number>;
  responseId: string;
}

const user = (text: string) => ({ role: "user", parts: [{ text }] });
const weatherTools = [
  {
    functionDeclarations: [
      {
        name: "get_weather",
        parameters: {
          type: "OBJECT",
          properties: { city: { type: "STRING" } },
          required: ["city"],
        },
      },
    ],
  },
];

function call(method: string, body: unknown, query = ""): Promise<Response> {
  return fetch(`${sandbox.url}/gemini/v1beta/models/gemini-2.5-flash:${method}${query}`, {
    method: "POST",
    headers: { "x-goog-api-key": "test-key", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function generate(body: unknown): Promise<GeminiBody> {
  return (await (await call("generateContent", body)).json()) as GeminiBody;
}

const textOf = (body: GeminiBody) =>
  body.candidates[0]?.content.parts
    .flatMap((part) => (part.thought ? [] : [part.text ?? ""]))
    .join("");

function sseChunks(text: string): GeminiBody[] {
  return text
    .split("\r\n\r\n")
    .filter((frame) => frame !== "")
    .map((frame) => JSON.parse(frame.replace(/^data: /, "")) as GeminiBody);
}

describe("streamGenerateContent", () => {
  const body = { contents: [user("Stream me")] };

  it("sends SSE chunks of text with finishReason and full usage on the last", async () => {
    const response = await call("streamGenerateContent", body, "?alt=sse");
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const chunks = sseChunks((await readAll(response)).text);
    const whole = await generate(body);
    expect(chunks.length).toBe(8);
    expect(chunks.map((chunk) => textOf(chunk)).join("")).toBe(textOf(whole));
    expect(
      chunks.slice(0, -1).every((chunk) => chunk.candidates[0]?.finishReason === undefined),
    ).toBe(true);
    expect(chunks[0]?.usageMetadata).toEqual({ promptTokenCount: 2, totalTokenCount: 2 });
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe("STOP");
    expect(chunks.at(-1)?.usageMetadata).toEqual(whole.usageMetadata);
    expect(new Set(chunks.map((chunk) => chunk.responseId)).size).toBe(1);
  });

  it("sends a function call whole in one chunk", async () => {
    const response = await call(
      "streamGenerateContent",
      { contents: [user("Weather?")], tools: weatherTools },
      "?alt=sse",
    );
    const chunks = sseChunks((await readAll(response)).text);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.candidates[0]?.content.parts[0]?.functionCall?.name).toBe("get_weather");
    expect(chunks[0]?.candidates[0]?.finishReason).toBe("STOP");
  });

  it("streams thoughts first, and a JSON array without alt=sse", async () => {
    const thinking = {
      ...body,
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    };
    const response = await call("streamGenerateContent", thinking);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const chunks = JSON.parse((await readAll(response)).text) as GeminiBody[];
    const parts = chunks.flatMap((chunk) => chunk.candidates[0]?.content.parts ?? []);
    const thoughts = parts.filter((part) => part.thought);
    expect(parts.slice(0, thoughts.length)).toEqual(thoughts);
    expect(thoughts.map((part) => part.text).join("")).toMatch(/^Thinking:( [a-z]+){11}$/);
    expect(chunks.at(-1)?.usageMetadata?.thoughtsTokenCount).toBe(12);
  });
});
