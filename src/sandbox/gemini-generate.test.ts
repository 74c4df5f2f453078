import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { postChat } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args: Record<string, unknown> };
}
interface GeminiBody {
  candidates: Array<{ content: { role: string; parts: Part[] }; finishReason?: string }>;
  usageMetadata?: Record<string, number>;
  modelVersion: string;
  responseId: string;
}

const MODEL = "gemini-2.5-flash";
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
      { name: "get_time" },
    ],
  },
];

function call(
  method: string,
  body: unknown,
  options: { headers?: Record<string, string>; query?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  const query = options.query ?? "";
  return fetch(`${sandbox.url}/gemini/v1beta/models/${MODEL}:${method}${query}`, {
    method: "POST",
    headers: {
      "x-goog-api-key": "test-key",
      "content-type": "application/json",
      ...options.headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

async function generate(body: unknown, headers?: Record<string, string>): Promise<GeminiBody> {
  const response = await call("generateContent", body, headers ? { headers } : {});
  expect(response.status).toBe(200);
  return (await response.json()) as GeminiBody;
}

const textOf = (body: GeminiBody) =>
  body.candidates[0]?.content.parts
    .flatMap((part) => (part.thought ? [] : [part.text ?? ""]))
    .join("");

describe("auth and routing", () => {
  it("wants x-goog-api-key or ?key=, answering 400 INVALID_ARGUMENT without", async () => {
    const missing = await call(
      "generateContent",
      { contents: [user("hi")] },
      {
        headers: { "x-goog-api-key": "" },
      },
    );
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: {
        code: 400,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "API_KEY_INVALID",
            domain: "googleapis.com",
            metadata: { service: "generativelanguage.googleapis.com" },
          },
        ],
      },
    });
    const byQuery = await call(
      "generateContent",
      { contents: [user("hi")] },
      {
        headers: { "x-goog-api-key": "" },
        query: "?key=abc",
      },
    );
    expect(byQuery.status).toBe(200);
  });

  it("answers unknown methods with 404 NOT_FOUND and bad JSON with INVALID_ARGUMENT", async () => {
    const unknown = await call("embedContent", { contents: [user("hi")] });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string } }).error.status).toBe(
      "NOT_FOUND",
    );
    const broken = await call("generateContent", '{"contents": [');
    expect(broken.status).toBe(400);
    const body = (await broken.json()) as { error: { message: string; status: string } };
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.message).toMatch(/^Invalid JSON payload received\./);
    const invalid = await call("generateContent", { contents: [] });
    expect(await invalid.json()).toEqual({
      error: {
        code: 400,
        message: "* GenerateContentRequest.contents: contents is not specified\n",
        status: "INVALID_ARGUMENT",
      },
    });
  });
});

describe("generateContent", () => {
  it("answers the planner's text with Gemini's response shape", async () => {
    const body = await generate({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [user("Hello there")],
    });
    expect(body.candidates).toEqual([
      {
        content: {
          role: "model",
          parts: [{ text: expect.stringMatching(/^Sandbox reply to Hello there: /) }],
        },
        finishReason: "STOP",
        index: 0,
      },
    ]);
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 4,
      candidatesTokenCount: 24,
      totalTokenCount: 28,
    });
    expect(body.modelVersion).toBe(MODEL);
    expect(body.responseId).toMatch(/^[A-Za-z0-9]{22}$/);
  });

  it("gives the OpenAI sandbox's text for the same model and messages", async () => {
    const openai = await postChat(sandbox.url, {
      model: MODEL,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Conformance text case" },
      ],
    });
    const expected = (await openai.json()) as { choices: Array<{ message: { content: string } }> };
    const gemini = await generate({
      systemInstruction: { parts: [{ text: "You are terse." }] },
      contents: [user("Conformance text case")],
    });
    expect(textOf(gemini)).toBe(expected.choices[0]?.message.content);
  });

  it("calls a function, honours toolConfig, and reads function responses", async () => {
    const first = await generate({ contents: [user("Weather?")], tools: weatherTools });
    const [part] = first.candidates[0]?.content.parts ?? [];
    expect(part?.functionCall?.name).toBe("get_weather");
    expect(part?.functionCall?.args.city).toMatch(/^[a-z]+$/);
    expect(first.candidates[0]?.finishReason).toBe("STOP");
    const forced = await generate({
      contents: [user("Time?")],
      tools: weatherTools,
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_time"] } },
    });
    expect(forced.candidates[0]?.content.parts[0]?.functionCall).toEqual({
      name: "get_time",
      args: {},
    });
    const none = await generate({
      contents: [user("Weather?")],
      tools: weatherTools,
      toolConfig: { functionCallingConfig: { mode: "NONE" } },
    });
    expect(textOf(none)).toMatch(/^Sandbox reply to Weather\?:/);
    const answered = await generate({
      tools: weatherTools,
      contents: [
        user("Weather?"),
        {
          role: "model",
          parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }],
        },
        {
          role: "user",
          parts: [
            {
              functionResponse: { name: "get_weather", response: { content: "Sunny, 21 degrees" } },
            },
          ],
        },
      ],
    });
    expect(textOf(answered)).toMatch(/^Sandbox reply using tool result: Sunny, 21 degrees /);
    expect(answered.candidates[0]?.finishReason).toBe("STOP");
  });

  it("mentions images, answers JSON, and caps with maxOutputTokens", async () => {
    const image = await generate({
      contents: [
        {
          role: "user",
          parts: [{ text: "Describe" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }],
        },
      ],
    });
    expect(textOf(image)).toMatch(/^Sandbox reply to Describe: I saw 1 image\. /);
    expect(image.usageMetadata?.promptTokenCount).toBe(1 + 85);
    const json = await generate({
      contents: [user("JSON please")],
      generationConfig: { responseMimeType: "application/json" },
    });
    expect(JSON.parse(textOf(json) ?? "")).toEqual({ answer: expect.any(String) });
    const capped = await generate({
      contents: [user("Say a lot")],
      generationConfig: { maxOutputTokens: 5 },
    });
    expect(textOf(capped)).toBe("Sandbox reply to Say a");
    expect(capped.candidates[0]?.finishReason).toBe("MAX_TOKENS");
    expect(capped.usageMetadata?.candidatesTokenCount).toBe(5);
  });

  it("leads with a thought part for includeThoughts, counted apart from candidates", async () => {
    const body = await generate({
      contents: [user("Think first")],
      generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 4 } },
    });
    const [thought, answer] = body.candidates[0]?.content.parts ?? [];
    expect(thought).toEqual({
      text: expect.stringMatching(/^Thinking: \S+ \S+ \S+$/),
      thought: true,
    });
    expect(answer?.text).toMatch(/^Sandbox reply to Think first:/);
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 2,
      candidatesTokenCount: 24,
      thoughtsTokenCount: 4,
      totalTokenCount: 30,
    });
    const capped = await generate({
      contents: [user("Think first")],
      generationConfig: { maxOutputTokens: 10, thinkingConfig: { includeThoughts: true } },
    });
    expect(capped.usageMetadata).toMatchObject({ thoughtsTokenCount: 10, candidatesTokenCount: 0 });
    expect(capped.candidates[0]?.finishReason).toBe("MAX_TOKENS");
  });

  it("counts tokens", async () => {
    const response = await call("countTokens", {
      contents: [user("one two three"), { role: "model", parts: [{ text: "four" }] }],
    });
    expect(await response.json()).toEqual({ totalTokens: 4 });
  });
});
