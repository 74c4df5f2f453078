/**
 * Hostile input against the sandbox over real HTTP: huge prompts made of directive openings or
 * whitespace are answered in a moment, directive values beyond their bounds are refused like
 * typos, and pictures beyond the vendor's pixel budget are refused with OpenAI's error body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { AUTH_HEADERS, chatBody, postChat } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

async function timed(request: Promise<Response>) {
  const started = performance.now();
  const response = await request;
  const text = await response.text();
  return { response, text, ms: performance.now() - started };
}

describe("huge prompts", () => {
  const prompts: [string, string][] = [
    ["400 KB of directive openings", "[[sandbox:".repeat(40_000)],
    ["400 KB of unclosed directives", "[[sandbox:x]".repeat(34_000)],
    ["400 KB of whitespace", `${" \t".repeat(200_000)}hello`],
  ];

  for (const [name, prompt] of prompts) {
    it(`answers ${name} in a moment (OpenAI, Anthropic and Gemini shapes)`, async () => {
      const openai = await timed(postChat(sandbox.url, chatBody(prompt)));
      expect(openai.response.status, openai.text).toBe(200);
      expect(openai.ms).toBeLessThan(1_000);
      const anthropic = await timed(
        fetch(`${sandbox.url}/anthropic/v1/messages`, {
          method: "POST",
          headers: {
            "x-api-key": "sk-test",
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
          },
          body: JSON.stringify({
            model: "claude-sonnet-4-5",
            max_tokens: 50,
            messages: [{ role: "user", content: prompt }],
          }),
        }),
      );
      expect(anthropic.response.status, anthropic.text).toBe(200);
      expect(anthropic.ms).toBeLessThan(1_000);
      const gemini = await timed(
        fetch(`${sandbox.url}/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
          method: "POST",
          headers: { "x-goog-api-key": "sk-test", "content-type": "application/json" },
          body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: prompt }] }] }),
        }),
      );
      expect(gemini.response.status, gemini.text).toBe(200);
      expect(gemini.ms).toBeLessThan(1_000);
    });
  }
});

describe("directive bounds", () => {
  const refused: [string, RegExp][] = [
    ["words=1000001", /'words' must be an integer 0-1000000/],
    ["delay=600001", /'delay' must be an integer 0-600000/],
    ["chunk-delay=60001", /'chunk-delay' must be an integer 0-60000/],
    ["fail-times=1001", /'fail-times' must be an integer 0-1000/],
    ["reasoning=1000001", /'reasoning' must be an integer 0-1000000/],
    ["retry-after=86400", /retry-after must be a number of seconds 0-3600/],
  ];

  for (const [spec, message] of refused) {
    it(`refuses ${spec} as a directive and as a header`, async () => {
      const directive = await postChat(sandbox.url, chatBody(`hello [[sandbox:${spec}]]`));
      expect(directive.status).toBe(400);
      const body = (await directive.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_sandbox_fault");
      expect(body.error.message).toMatch(message);
      const header = await postChat(sandbox.url, chatBody("hello"), {
        headers: { "x-sandbox-fault": spec },
      });
      expect(header.status).toBe(400);
    });
  }

  it("still honours values at the bounds", async () => {
    const response = await postChat(sandbox.url, chatBody("hi", { max_tokens: 3 }), {
      headers: { "x-sandbox-fault": "words=1000000;retry-after=3600" },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { usage: { completion_tokens: number } };
    expect(body.usage.completion_tokens).toBe(3);
  });
});

describe("picture bounds", () => {
  const generate = (size: string) =>
    fetch(`${sandbox.url}/openai/v1/images/generations`, {
      method: "POST",
      headers: AUTH_HEADERS,
      body: JSON.stringify({ model: "gpt-image-2", prompt: "a lighthouse", size, n: 10 }),
    });

  it("refuses a free-form size over OpenAI's pixel budget, with OpenAI's error", async () => {
    const { response, text, ms } = await timed(generate("3840x3840"));
    expect(response.status).toBe(400);
    expect(ms).toBeLessThan(1_000);
    expect(JSON.parse(text)).toEqual({
      error: {
        message: expect.stringMatching(/^Invalid size '3840x3840'.*at most 8294400 pixels/),
        type: "invalid_request_error",
        param: "size",
        code: "invalid_value",
      },
    });
  });

  it("answers other requests while it draws many large pictures", async () => {
    const heavy = fetch(`${sandbox.url}/openai/v1/images/generations`, {
      method: "POST",
      headers: AUTH_HEADERS,
      body: JSON.stringify({
        model: "gpt-image-2",
        prompt: "many pictures",
        size: "3840x2160",
        output_format: "jpeg",
        n: 4,
      }),
    });
    // Wait until the drawing has begun, then ask for the counters in between pictures.
    await new Promise((resolve) => setTimeout(resolve, 50));
    let heavyDone = false;
    void heavy.then(() => {
      heavyDone = true;
    });
    const stats = await fetch(`${sandbox.url}/__sandbox/stats`);
    expect(stats.status).toBe(200);
    expect(heavyDone).toBe(false);
    const answer = await heavy;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: unknown[] }).data).toHaveLength(4);
  });
});

describe("prompts over the model's context window", () => {
  const anthropic = (prompt: string) =>
    fetch(`${sandbox.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": "sk-test",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 50,
        messages: [{ role: "user", content: prompt }],
      }),
    });
  const gemini = (prompt: string) =>
    fetch(`${sandbox.url}/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": "sk-test", "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: prompt }] }] }),
    });

  it("refuses them with each vendor's error, counting at least a token per four characters", async () => {
    // 600,000 characters without a space: one sandbox word, at least 150,000 vendor tokens.
    const openai = await postChat(sandbox.url, chatBody("abcd".repeat(150_000)));
    expect(openai.status).toBe(400);
    expect(await openai.json()).toEqual({
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 150000 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    });
    const claude = await anthropic("abcd".repeat(200_001));
    expect(claude.status).toBe(400);
    expect(await claude.json()).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 200001 tokens > 200000 maximum",
      },
    });
    const google = await gemini("abcd ".repeat(1_048_577));
    expect(google.status).toBe(400);
    expect(await google.json()).toMatchObject({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: expect.stringContaining("exceeds the maximum number of tokens allowed (1048576)"),
      },
    });
  });

  it("answers prompts that fit", async () => {
    expect((await postChat(sandbox.url, chatBody("abcd".repeat(127_000)))).status).toBe(200);
    expect((await anthropic("abcd".repeat(199_000))).status).toBe(200);
  });
});
