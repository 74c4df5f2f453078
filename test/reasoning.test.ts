import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

type WithReasoning<T> = T & { reasoning_content?: string };

describe("reasoning models", () => {
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startTestGateway();
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.adminKey, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  const prompt = "[[sandbox:reasoning=12;words=6]] think first";

  it("passes reasoning as reasoning_content and reports and bills reasoning tokens", async () => {
    const response = await client.chat.completions
      .create({ model: "deepseek-reasoner", messages: [{ role: "user", content: prompt }] })
      .withResponse();
    const completion = response.data;
    const message = completion.choices[0]?.message as WithReasoning<OpenAI.ChatCompletionMessage>;
    expect(message.reasoning_content).toMatch(/^Thinking it over:/);
    expect(message.reasoning_content?.split(" ")).toHaveLength(12);
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(12);
    expect(completion.usage?.completion_tokens).toBe(18);
    const requestId = response.response.headers.get("x-request-id");
    const usage = (await (
      await gateway.request("/v1/account/usage", { key: gateway.adminKey })
    ).json()) as {
      data: Array<{
        request_id: string;
        reasoning_tokens: number;
        output_tokens: number;
        breakdown: Record<string, number>;
      }>;
    };
    const record = usage.data.find((row) => row.request_id === requestId);
    expect(record).toMatchObject({ reasoning_tokens: 12, output_tokens: 18 });
    expect(record?.breakdown.reasoning).toBeGreaterThan(0);
  });

  it("streams reasoning deltas before the answer", async () => {
    const stream = await client.chat.completions.create({
      model: "deepseek-reasoner",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: prompt }],
    });
    let reasoning = "";
    let content = "";
    let reasoningAfterContent = false;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as
        | WithReasoning<OpenAI.ChatCompletionChunk.Choice.Delta>
        | undefined;
      if (delta?.reasoning_content) {
        if (content) reasoningAfterContent = true;
        reasoning += delta.reasoning_content;
      }
      content += delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(reasoning).toMatch(/^Thinking it over:/);
    expect(content.split(" ")).toHaveLength(6);
    expect(reasoningAfterContent).toBe(false);
    expect(usage?.completion_tokens_details?.reasoning_tokens).toBe(12);
  });
});
