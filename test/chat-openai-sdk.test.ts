import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { SPEC_MODEL_IDS } from "./support/spec-model-ids.ts";

describe("the official openai package against the gateway", () => {
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startTestGateway();
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.adminKey, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it("completes a chat without streaming, with usage", async () => {
    const completion = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Say hello to the gateway" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("gpt-4o-mini");
    expect(completion.choices[0]?.message.role).toBe("assistant");
    expect(completion.choices[0]?.message.content).toMatch(
      /^Sandbox reply to Say hello to the gateway/,
    );
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage?.total_tokens).toBe(
      (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
    );
  });

  it("streams a chat with a usage chunk when asked", async () => {
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Stream please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    let first = true;
    for await (const chunk of stream) {
      if (first) {
        expect(chunk.choices[0]?.delta.role).toBe("assistant");
        first = false;
      }
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/^Sandbox reply to Stream please/);
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("hides the usage chunk when the client did not ask for it", async () => {
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "No usage" }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(
      true,
    );
  });

  it("lists every model id of the spec", async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    for (const id of SPEC_MODEL_IDS) expect(ids).toContain(id);
    expect(ids.length).toBeGreaterThanOrEqual(100);
  });

  it("retrieves one model", async () => {
    const model = await client.models.retrieve("gpt-4o");
    expect(model).toMatchObject({
      id: "gpt-4o",
      object: "model",
      owned_by: "openai",
      endpoint: "chat",
    });
  });
});
