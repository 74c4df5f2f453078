/**
 * One small request must not stall the gateway's event loop through its token counts: a run of
 * one character is one piece for o200k's BPE, whose merge is quadratic in a piece's length (8,000
 * times `a` held the loop for 7.7 s through a chat hold, 17,000 for 25 s through an aborted
 * stream's count, count_tokens or embeddings). The gateway runs in this process, so a timer
 * ticking every 10 ms here sees every stall. The bar is the project's own
 * (test/body-limit-hostile.test.ts: under 1 s for a 10 MB body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { longestStall } from "./support/loop-stall.ts";

describe("token counts of pathological prompts", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway, { balanceMicros: 1_000_000_000 })).key;
    // Warm up the tokenizer and the route.
    const warm = await gateway.request("/v1/chat/completions", {
      key,
      json: {
        model: "gpt-4o-mini",
        max_tokens: 8,
        messages: [{ role: "user", content: "hello ".repeat(200) }],
      },
    });
    await warm.text();
  }, 60_000);
  afterAll(() => gateway.close());

  it("an 8 KB chat prompt of one repeated letter does not block the event loop (billing hold)", async () => {
    const prompt = "a".repeat(8_000);
    const { stallMs, result } = await longestStall(async () => {
      const response = await gateway.request("/v1/chat/completions", {
        key,
        json: {
          model: "gpt-4o-mini",
          max_tokens: 8,
          messages: [{ role: "user", content: prompt }],
        },
      });
      return { status: response.status, text: await response.text() };
    });
    expect(result.status, result.text).toBe(200);
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms by one chat request whose prompt is ${prompt.length} bytes of 'a'`,
    ).toBeLessThan(1_000);
  }, 120_000);

  it("a 17 KB prompt (above TOKENIZE_LIMIT_CHARS) of one letter, stream aborted by the client, does not block the event loop", async () => {
    const prompt = "a".repeat(17_000);
    const { stallMs, result } = await longestStall(async () => {
      const controller = new AbortController();
      const response = await gateway.request("/v1/chat/completions", {
        key,
        signal: controller.signal,
        json: {
          model: "gpt-4o-mini",
          stream: true,
          max_tokens: 64,
          messages: [
            // Paces the (simulated) vendor like a real one: a frame every 2 s.
            { role: "system", content: "[[sandbox:chunk-delay=2000]]" },
            { role: "user", content: prompt },
          ],
        },
      });
      const status = response.status;
      const reader = response.body!.getReader();
      await reader.read(); // the first frame
      controller.abort(); // the client goes away
      await reader.cancel().catch(() => {});
      // Give the gateway a moment to hear of the abort (and settle the request).
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { status };
    });
    expect(result.status).toBe(200);
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms after a client aborted a stream whose prompt is ${prompt.length} bytes of 'a'`,
    ).toBeLessThan(1_000);
  }, 180_000);

  it("POST /v1/messages/count_tokens of a 17 KB prompt of one letter (translated route) does not block the event loop", async () => {
    const prompt = "a".repeat(17_000);
    const { stallMs, result } = await longestStall(async () => {
      const response = await gateway.request("/v1/messages/count_tokens", {
        key,
        json: { model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }] },
      });
      return { status: response.status, text: await response.text() };
    });
    expect(result.status, result.text).toBe(200);
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms by one count_tokens request whose prompt is ${prompt.length} bytes of 'a' (answer ${result.text})`,
    ).toBeLessThan(1_000);
  }, 180_000);

  it("POST /v1/embeddings with 4 inputs of 8,000 repeated letters (32 KB) does not block the event loop", async () => {
    const input = Array.from({ length: 4 }, () => "a".repeat(8_000));
    const { stallMs, result } = await longestStall(async () => {
      const response = await gateway.request("/v1/embeddings", {
        key,
        json: { model: "vec-4", input },
      });
      return { status: response.status, text: (await response.text()).slice(0, 300) };
    });
    expect(result.status, result.text).toBe(200);
    expect(
      stallMs,
      `event loop blocked for ${Math.round(stallMs)} ms by one embeddings request of ${input.length} inputs x ${input[0]!.length} bytes of 'a'`,
    ).toBeLessThan(1_000);
  }, 180_000);
});
