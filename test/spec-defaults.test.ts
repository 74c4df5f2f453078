/**
 * Spec defaults the gateway applies itself rather than leaving to each vendor: `temperature`
 * and `top_p` 1 (spec 2.1) reach the vendor for models that take sampling and never for models
 * that refuse it, on every chat protocol; and every path carries `/v1` (spec 9): health,
 * readiness and the API document answer there as at the root.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe("spec defaults", () => {
  let gateway: TestGateway;
  let client: OpenAI;

  /** The body the sandbox received last on a path ending in `suffix`. */
  async function lastUpstream(suffix: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=50`);
    const { requests } = (await response.json()) as {
      requests: { path: string; body: Record<string, unknown> }[];
    };
    const found = requests.filter((entry) => entry.path.includes(suffix)).at(-1);
    if (!found) throw new Error(`no upstream request on ${suffix}`);
    return found.body;
  }

  beforeAll(async () => {
    gateway = await startTestGateway();
    const { key } = await createUser(gateway);
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  const hello = [{ role: "user" as const, content: "hello" }];

  it("sends temperature 1 and top_p 1 to a chat model when the client gives neither", async () => {
    await client.chat.completions.create({ model: "gpt-4o-mini", messages: hello });
    expect(await lastUpstream("/chat/completions")).toMatchObject({ temperature: 1, top_p: 1 });
  });

  it("keeps the client's own values, defaulting only the other", async () => {
    await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: hello,
      temperature: 0.2,
    });
    expect(await lastUpstream("/chat/completions")).toMatchObject({ temperature: 0.2, top_p: 1 });
  });

  it("sends neither to a reasoning model, which refuses them", async () => {
    await client.chat.completions.create({ model: "gpt-5", messages: hello });
    const body = await lastUpstream("/chat/completions");
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("top_p");
  });

  it("sends the default to Gemini and to Anthropic (which takes one of the two)", async () => {
    await client.chat.completions.create({ model: "gemini-2.5-flash", messages: hello });
    const gemini = (await lastUpstream(":generateContent")).generationConfig as Record<
      string,
      unknown
    >;
    expect(gemini).toMatchObject({ temperature: 1, topP: 1 });

    await client.chat.completions.create({ model: "claude-haiku-4-5", messages: hello });
    const claude = await lastUpstream("/messages");
    expect(claude.temperature).toBe(1);
    expect(claude).not.toHaveProperty("top_p");

    // A client's top_p alone is kept, not crowded out by the default temperature.
    await client.chat.completions.create({
      model: "claude-haiku-4-5",
      messages: hello,
      top_p: 0.8,
    });
    const topP = await lastUpstream("/messages");
    expect(topP.top_p).toBe(0.8);
    expect(topP).not.toHaveProperty("temperature");
  });

  it("serves health, readiness and the API document under /v1 too", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const root = await gateway.request(path);
      const prefixed = await gateway.request(`/v1${path}`);
      expect(prefixed.status).toBe(root.status);
      expect(await prefixed.json()).toEqual(await root.json());
    }
    const root = await (await gateway.request("/openapi.json")).json();
    const prefixed = await gateway.request("/v1/openapi.json");
    expect(prefixed.status).toBe(200);
    expect(await prefixed.json()).toEqual(root);
  });
});
