import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { chatBody, postChat, wordCount } from "./test-kit.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

interface Completion {
  id: string;
  object: string;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: number;
    message: {
      role: string;
      content: string | null;
      refusal: null;
      tool_calls?: Array<{
        id: string;
        type: string;
        function: { name: string; arguments: string };
      }>;
    };
    logprobs: null;
    finish_reason: string;
  }>;
  usage: Record<string, unknown>;
}

async function complete(body: unknown, path?: string): Promise<Completion> {
  const response = await postChat(sandbox.url, body, path ? { path } : {});
  expect(response.status).toBe(200);
  return (await response.json()) as Completion;
}

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("non-stream chat completions", () => {
  it("returns the real OpenAI shape with usage and x-request-id", async () => {
    const body = {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hello there friend" },
      ],
    };
    const response = await postChat(sandbox.url, body);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    const json = (await response.json()) as Completion;
    expect(json.id).toMatch(/^chatcmpl-[A-Za-z0-9]{28}$/);
    expect(json.object).toBe("chat.completion");
    expect(json.model).toBe("gpt-4o-mini");
    expect(json.system_fingerprint).toMatch(/^fp_[0-9a-f]{10}$/);
    expect(json.choices).toHaveLength(1);
    const [choice] = json.choices;
    expect(choice?.index).toBe(0);
    expect(choice?.message.role).toBe("assistant");
    expect(choice?.message.refusal).toBeNull();
    expect(choice?.logprobs).toBeNull();
    expect(choice?.finish_reason).toBe("stop");
    expect(choice?.message.content).toMatch(/^Sandbox reply to Hello there friend: /);
    expect(wordCount(choice?.message.content ?? "")).toBe(24);
    expect(json.usage).toEqual({
      prompt_tokens: 6,
      completion_tokens: 24,
      total_tokens: 30,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    });
  });

  it("is deterministic per conversation, whatever the model or vendor prefix", async () => {
    const a = await complete(chatBody("Tell me a story"));
    const b = await complete(chatBody("Tell me a story"));
    expect(b.choices[0]?.message.content).toBe(a.choices[0]?.message.content);
    expect(b.id).not.toBe(a.id);
    const other = await complete(chatBody("Tell me a poem"));
    expect(other.choices[0]?.message.content).not.toBe(a.choices[0]?.message.content);
    const otherModel = await complete({ ...chatBody("Tell me a story"), model: "deepseek-chat" });
    expect(otherModel.choices[0]?.message.content).toBe(a.choices[0]?.message.content);
    for (const path of [
      "/deepseek/v1/chat/completions",
      "/dashscope/compatible-mode/v1/chat/completions",
      "/groq/openai/v1/chat/completions",
    ]) {
      const viaVendor = await complete(chatBody("Tell me a story"), path);
      expect(viaVendor.choices[0]?.message.content).toBe(a.choices[0]?.message.content);
    }
  });

  it("caps the reply with max_tokens and max_completion_tokens", async () => {
    const capped = await complete(chatBody("Count", { max_tokens: 5 }));
    expect(capped.choices[0]?.finish_reason).toBe("length");
    expect(wordCount(capped.choices[0]?.message.content ?? "")).toBe(5);
    expect(capped.usage.completion_tokens).toBe(5);
    const newer = await complete(chatBody("Count", { max_completion_tokens: 3, max_tokens: 50 }));
    expect(newer.choices[0]?.message.content).toBe("Sandbox reply to");
  });

  it("answers with a deterministic tool call, then uses the tool result", async () => {
    const body = chatBody("What's the weather in Paris?", { tools: [weatherTool] });
    const call = await complete(body);
    const choice = call.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    const toolCall = choice?.message.tool_calls?.[0];
    expect(toolCall?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(toolCall?.type).toBe("function");
    expect(toolCall?.function.name).toBe("get_weather");
    expect(JSON.parse(toolCall?.function.arguments ?? "")).toEqual({
      city: expect.stringMatching(/^[a-z]+$/),
    });
    expect((await complete(body)).choices[0]?.message.tool_calls).toEqual(
      choice?.message.tool_calls,
    );

    const followUp = await complete({
      ...body,
      messages: [
        ...body.messages,
        { role: "assistant", content: null, tool_calls: choice?.message.tool_calls },
        { role: "tool", tool_call_id: toolCall?.id, content: '{"temperature": 21}' },
      ],
    });
    expect(followUp.choices[0]?.finish_reason).toBe("stop");
    expect(followUp.choices[0]?.message.content).toMatch(
      /^Sandbox reply using tool result: \{"temperature": 21\} /,
    );
  });

  it("returns a JSON object for response_format json_object", async () => {
    const json = await complete(
      chatBody("Give JSON", { response_format: { type: "json_object" } }),
    );
    const parsed = JSON.parse(json.choices[0]?.message.content ?? "") as { answer: string };
    expect(Object.keys(parsed)).toEqual(["answer"]);
    expect(parsed.answer).toMatch(/^Sandbox reply to Give JSON: /);
    expect(wordCount(parsed.answer)).toBe(24);
  });

  it("accepts image blocks and says how many it saw", async () => {
    const json = await complete({
      model: "gpt-4o",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Describe" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
          ],
        },
      ],
    });
    expect(json.choices[0]?.message.content).toMatch(
      /^Sandbox reply to Describe: I saw 1 image\. /,
    );
    expect(json.usage.prompt_tokens).toBe(1 + 85);
  });
});
