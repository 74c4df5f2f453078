/**
 * A vendor whose chat answers carry `content` as a list of parts (Mistral's Magistral models:
 * `text` parts and `thinking` parts of text parts), served to clients of another protocol. The
 * typed adapter read `content` as a string only: an Anthropic client got the parts list as a
 * text delta (a protocol error) or nothing. Now the text parts are the answer and the thinking
 * parts its reasoning, streamed or not.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readOpenAIContent } from "../src/providers/openai-compatible/map-openai-response.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";

const THINKING = "Let me weigh it. ";
const ANSWER = "Forty-two, plainly.";

const parts = (thinking: string, text: string) => [
  { type: "thinking", thinking: [{ type: "text", text: thinking }] },
  { type: "text", text },
];

function chunk(delta: object, finish: string | null = null) {
  const body = {
    id: "cmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "magistral-small-2509",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

describe("content as a list of parts (Magistral) to an Anthropic client", () => {
  let vendor: Server;
  let gateway: TestGateway;
  beforeAll(async () => {
    vendor = createServer((request, response) => {
      let raw = "";
      request.on("data", (part: Buffer) => {
        raw += part.toString();
      });
      request.on("end", () => {
        const stream = (JSON.parse(raw) as { stream?: boolean }).stream === true;
        if (!stream) {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              id: "cmpl-1",
              object: "chat.completion",
              created: 1,
              model: "magistral-small-2509",
              choices: [
                {
                  index: 0,
                  message: { role: "assistant", content: parts(THINKING, ANSWER) },
                  finish_reason: "stop",
                },
              ],
              usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 },
            }),
          );
          return;
        }
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write(chunk({ role: "assistant", content: "" }));
        response.write(chunk({ content: parts(THINKING, "") }));
        for (const word of ANSWER.split(/(?<= )/))
          response.write(chunk({ content: [{ type: "text", text: word }] }));
        response.write(chunk({}, "stop"));
        response.write(
          `data: ${JSON.stringify({ id: "cmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 } })}\n\n`,
        );
        response.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}/v1`;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            {
              id: "parts-model",
              endpoint: "chat",
              family: "magistral",
              display_name: "A model answering in parts",
              owned_by: "self-hosted",
              capabilities: { streaming: true, reasoning: true, max_output_tokens: 1000 },
              pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
              routes: [
                {
                  vendor: "parts",
                  adapter: "openai-compatible",
                  base_url: url,
                  upstream_model: "magistral-small-2509",
                },
              ],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => vendor.close(resolve));
  });

  const client = (key: string) => new Anthropic({ baseURL: gateway.url, apiKey: key });
  const ask = {
    model: "parts-model",
    max_tokens: 500,
    messages: [{ role: "user" as const, content: "?" }],
  };

  it("answers with the text parts as text, not the list", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const message = await client(user.key).messages.create(ask);
    const text = message.content.filter((block) => block.type === "text");
    expect(text.map((block) => block.text).join("")).toBe(ANSWER);
  });

  it("streams the text parts as text deltas and the thinking as thinking, and bills the stream", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const response = await gateway.request("/v1/messages", {
      key: user.key,
      headers: { "anthropic-version": "2023-06-01" },
      json: { ...ask, stream: true },
    });
    const events = (await response.text())
      .split("\n\n")
      .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
      .filter((data): data is string => data !== undefined)
      .map((data) => JSON.parse(data) as { type: string; delta?: Record<string, string> });
    const deltas = (kind: string, field: string) =>
      events
        .filter((event) => event.type === "content_block_delta" && event.delta?.type === kind)
        .map((event) => event.delta?.[field])
        .join("");
    expect(deltas("text_delta", "text")).toBe(ANSWER);
    expect(deltas("thinking_delta", "thinking")).toBe(THINKING);
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    expect(record).toMatchObject({ status: "succeeded", output_tokens: 20 });
  });
});

describe("readOpenAIContent", () => {
  it("reads strings, lists of parts and anything else", () => {
    expect(readOpenAIContent("hi")).toEqual({ text: "hi", reasoning: "" });
    expect(readOpenAIContent(parts("a", "b"))).toEqual({ text: "b", reasoning: "a" });
    expect(
      readOpenAIContent([{ type: "thinking", thinking: "t" }, null, 3, { type: "reference" }]),
    ).toEqual({
      text: "",
      reasoning: "t",
    });
    expect(readOpenAIContent(null)).toEqual({ text: null, reasoning: "" });
    expect(readOpenAIContent({ text: "x" })).toEqual({ text: null, reasoning: "" });
  });
});
