/**
 * The sandbox never stalls the gateway (issue 11, point 3): the gateway started by `startGateway`
 * runs its sandbox off its own event loop, so `/healthz` answers within a fraction of a second
 * while the sandbox draws large pictures or reads a 400 KB prompt full of `[[sandbox:`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { slowestHealthz } from "./support/healthz-probe.ts";

describe("the sandbox never stalls the gateway", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  it("answers /healthz quickly while the sandbox draws large pictures", async () => {
    const started = performance.now();
    const { slowestMs, polls, result } = await slowestHealthz(gateway, async () => {
      const response = await fetch(`${gateway.sandboxUrl}/openai/v1/images/generations`, {
        method: "POST",
        headers: { authorization: "Bearer sk-sandbox", "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-image-2",
          prompt: "a harbour at dawn",
          size: "3840x2160",
          output_format: "jpeg",
          n: 2,
        }),
      });
      return { status: response.status, body: (await response.json()) as { data: unknown[] } };
    });
    expect(result.status).toBe(200);
    expect(result.body.data).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThan(500);
    expect(polls).toBeGreaterThan(3);
    expect(slowestMs).toBeLessThan(250);
  });

  it("answers a 400 KB prompt of repeated [[sandbox: at once, /healthz too", async () => {
    const prompt = "[[sandbox:".repeat(40_000);
    const started = performance.now();
    const { slowestMs, result } = await slowestHealthz(gateway, async () => {
      const response = await gateway.request("/v1/chat/completions", {
        key,
        json: {
          model: "gpt-4o-mini",
          max_tokens: 16,
          messages: [{ role: "user", content: prompt }],
        },
      });
      return { status: response.status, text: await response.text() };
    });
    expect(result.status, result.text).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(slowestMs).toBeLessThan(250);
  });

  it("refuses a directive beyond its bound with the sandbox's message", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Hi [[sandbox:delay=600001]]" }],
      },
    });
    const body = (await response.json()) as { error: { message: string } };
    expect(response.status).toBe(400);
    expect(body.error.message).toMatch(/'delay' must be an integer 0-600000/);
  });
});
