/**
 * The sandbox refuses what each vendor refuses, per model family, with the vendor's own error
 * body (docs/sandbox.md, "As strict as the vendors"), and accepts the same request where the
 * vendor does. Requests go straight to the sandbox, as a vendor's client would send them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesBody, postMessages } from "./anthropic-test-kit.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, dataFrames, postChat, readAll } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

async function openAIError(body: unknown, path?: string) {
  const response = await postChat(sandbox.url, body, path ? { path } : {});
  expect(response.status).toBe(400);
  return ((await response.json()) as { error: Record<string, unknown> }).error;
}

async function accepted(body: unknown, path?: string) {
  const response = await postChat(sandbox.url, body, path ? { path } : {});
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as {
    choices: Array<{ index: number; message: { content: string }; finish_reason: string }>;
    usage: { completion_tokens: number; prompt_tokens: number };
  };
}

describe("OpenAI", () => {
  it("refuses max_tokens on reasoning models exactly as OpenAI does", async () => {
    for (const model of ["gpt-5", "gpt-5-mini", "gpt-5.2", "o3", "o4-mini", "o1"]) {
      expect(await openAIError(chatBody("hi", { model, max_tokens: 100 }))).toEqual({
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: "invalid_request_error",
        param: "max_tokens",
        code: "unsupported_parameter",
      });
    }
    await accepted(chatBody("hi", { model: "gpt-5", max_completion_tokens: 100 }));
    // Other models take either name.
    await accepted(chatBody("hi", { model: "gpt-4o", max_tokens: 100 }));
    await accepted(chatBody("hi", { model: "gpt-5-chat-latest", max_tokens: 100 }));
  });

  it("refuses non-default sampling on reasoning models", async () => {
    expect(await openAIError(chatBody("hi", { model: "gpt-5", temperature: 0.7 }))).toEqual({
      message:
        "Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.",
      type: "invalid_request_error",
      param: "temperature",
      code: "unsupported_value",
    });
    expect(await openAIError(chatBody("hi", { model: "o3", top_p: 0.5 }))).toMatchObject({
      param: "top_p",
      code: "unsupported_value",
    });
    for (const [param, value] of [
      ["presence_penalty", 0.5],
      ["frequency_penalty", 0.5],
      ["logprobs", true],
      ["top_logprobs", 2],
    ] as const) {
      expect(
        await openAIError(chatBody("hi", { model: "gpt-5-mini", [param]: value })),
      ).toMatchObject({
        message: `Unsupported parameter: '${param}' is not supported with this model.`,
        param,
        code: "unsupported_parameter",
      });
    }
    // The defaults and nulls are fine; GPT-5.1 and later sample when they do not reason.
    await accepted(chatBody("hi", { model: "gpt-5", temperature: 1, top_p: null }));
    await accepted(
      chatBody("hi", { model: "gpt-5.2", temperature: 0.2, reasoning_effort: "none" }),
    );
    await accepted(chatBody("hi", { model: "gpt-4o-mini", temperature: 0.2, presence_penalty: 1 }));
  });

  it("refuses an output cap above the model's limit", async () => {
    expect(await openAIError(chatBody("hi", { model: "gpt-4o-mini", max_tokens: 20_000 }))).toEqual(
      {
        message:
          "max_tokens is too large: 20000. This model supports at most 16384 completion tokens, whereas you provided 20000.",
        type: "invalid_request_error",
        param: "max_tokens",
        code: "invalid_value",
      },
    );
    await accepted(chatBody("hi", { model: "gpt-4o-mini", max_tokens: 16_384 }));
  });

  it("answers n choices, each its own, billed together", async () => {
    const one = await accepted(chatBody("Several answers", { max_tokens: 10 }));
    const two = await accepted(chatBody("Several answers", { max_tokens: 10, n: 2 }));
    expect(two.choices.map((choice) => choice.index)).toEqual([0, 1]);
    expect(two.choices[0]?.message.content).toBe(one.choices[0]?.message.content);
    expect(two.choices[1]?.message.content).not.toBe(two.choices[0]?.message.content);
    expect(two.usage.prompt_tokens).toBe(one.usage.prompt_tokens);
    expect(two.usage.completion_tokens).toBe(20);
    expect(await openAIError(chatBody("hi", { n: 129 }))).toMatchObject({
      param: "n",
      code: "integer_above_max_value",
    });
  });

  it("streams n choices interleaved, each with its index and finish", async () => {
    const response = await postChat(
      sandbox.url,
      chatBody("Several streams", { n: 2, stream: true, stream_options: { include_usage: true } }),
    );
    const frames = dataFrames((await readAll(response)).text);
    expect(frames.at(-1)).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame));
    const text = ["", ""];
    const finished: string[] = [];
    for (const chunk of chunks) {
      for (const choice of chunk.choices) {
        text[choice.index] += choice.delta.content ?? "";
        if (choice.finish_reason) finished[choice.index] = choice.finish_reason;
      }
    }
    expect(chunks[1].choices[0].index).toBe(1); // the choices take turns
    expect(finished).toEqual(["stop", "stop"]);
    expect(text[0]).not.toBe(text[1]);
    expect(chunks.at(-1).usage.completion_tokens).toBe(48);
  });
});

describe("Groq", () => {
  it("serves one choice only", async () => {
    const path = "/groq/openai/v1/chat/completions";
    const error = await openAIError(chatBody("hi", { model: "llama-3.1-8b-instant", n: 2 }), path);
    expect(error).toMatchObject({ message: "'n' : number must be at most 1", param: "n" });
    await accepted(chatBody("hi", { model: "llama-3.1-8b-instant", n: 1 }), path);
  });
});

describe("Anthropic", () => {
  async function anthropicError(body: Record<string, unknown>) {
    const response = await postMessages(sandbox.url, messagesBody("hi", body));
    expect(response.status).toBe(400);
    const error = (await response.json()) as {
      type: string;
      error: { type: string; message: string };
    };
    expect(error.type).toBe("error");
    expect(error.error.type).toBe("invalid_request_error");
    return error.error.message;
  }

  it("requires max_tokens", async () => {
    const response = await postMessages(sandbox.url, {
      model: "claude-haiku-4-5",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "max_tokens: Field required",
    );
  });

  it("refuses temperature with top_p on the newer models, and takes it on older ones", async () => {
    for (const model of ["claude-sonnet-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1"]) {
      expect(await anthropicError({ model, temperature: 0.5, top_p: 0.9 })).toBe(
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
      );
    }
    const older = await postMessages(
      sandbox.url,
      messagesBody("hi", { model: "claude-3-5-haiku-20241022", temperature: 0.5, top_p: 0.9 }),
    );
    expect(older.status).toBe(200);
  });

  it("refuses temperature above 1, and other than 1 with thinking", async () => {
    expect(await anthropicError({ temperature: 1.5 })).toBe(
      "temperature: Input should be between 0 and 1",
    );
    expect(
      await anthropicError({
        temperature: 0.5,
        max_tokens: 4096,
        thinking: { type: "enabled", budget_tokens: 1024 },
      }),
    ).toMatch(/^`temperature` may only be set to 1 when thinking is enabled\./);
  });

  it("refuses max_tokens above the model's output limit", async () => {
    expect(await anthropicError({ model: "claude-haiku-4-5", max_tokens: 100_000 })).toBe(
      "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5",
    );
  });
});

describe("Gemini", () => {
  async function geminiError(model: string, generationConfig: Record<string, unknown>) {
    const response = await fetch(`${sandbox.url}/gemini/v1beta/models/${model}:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": "sk-test", "content-type": "application/json" },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "hi" }] }],
        generationConfig,
      }),
    });
    const body = (await response.json()) as {
      error?: { code: number; status: string; message: string };
    };
    return { status: response.status, error: body.error };
  }

  it("refuses penalties on Gemini 2.5 and later, and takes them on 2.0", async () => {
    const refused = await geminiError("gemini-2.5-flash", { presencePenalty: 0.5 });
    expect(refused).toEqual({
      status: 400,
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: "Penalty is not enabled for models/gemini-2.5-flash",
      },
    });
    expect((await geminiError("gemini-2.0-flash", { presencePenalty: 0.5 })).status).toBe(200);
  });

  it("refuses a cap above the model's limit and thinking off where it cannot be", async () => {
    expect(
      (await geminiError("gemini-2.5-flash", { maxOutputTokens: 70_000 })).error?.message,
    ).toBe(
      "Unable to submit request because it has a maxOutputTokens value of 70000 but the supported range is from 1 (inclusive) to 65537 (exclusive). Update the value and try again.",
    );
    const off = { thinkingConfig: { thinkingBudget: 0 } };
    expect((await geminiError("gemini-2.5-pro", off)).error?.message).toBe(
      "Budget 0 is invalid. This model only works in thinking mode.",
    );
    expect((await geminiError("gemini-2.5-flash", off)).status).toBe(200);
  });
});
