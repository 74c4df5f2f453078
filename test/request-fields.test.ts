/**
 * Known fields only, billed as sent: priced options the gateway cannot bill (service tiers, web
 * search, audio output, a vendor's built-in tools) are refused with 400 `unsupported_parameter`
 * naming the field; unknown fields are dropped, named in `x-switchyard-warnings`, and never reach
 * the vendor; options billed as tokens pass through. Official SDKs are the clients; the
 * sandbox's request log shows what the vendor received.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface LoggedRequest {
  path: string;
  body: Record<string, unknown> | null;
}

describe("request fields", () => {
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway, { balanceMicros: 50_000_000 })).key;
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  async function received(marker: string): Promise<LoggedRequest[]> {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=200`);
    const { requests } = (await response.json()) as { requests: LoggedRequest[] };
    return requests.filter((request) => JSON.stringify(request.body ?? {}).includes(marker));
  }

  const chat = (marker: string, extra: Record<string, unknown>) =>
    ({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: `hello ${marker}` }],
      ...extra,
    }) as OpenAI.ChatCompletionCreateParamsNonStreaming;

  describe("on /v1/chat/completions", () => {
    const refused: Array<[string, Record<string, unknown>, string]> = [
      ["a priority service tier", { service_tier: "priority" }, "service_tier"],
      ["a flex service tier", { service_tier: "flex" }, "service_tier"],
      ["web search options", { web_search_options: {} }, "web_search_options"],
      ["audio output", { modalities: ["text", "audio"] }, "modalities"],
      ["an audio voice", { audio: { voice: "alloy", format: "wav" } }, "audio"],
      ["xAI live search", { search_parameters: { mode: "on" } }, "search_parameters"],
      ["DashScope web search", { enable_search: true }, "enable_search"],
      ["a built-in tool", { tools: [{ type: "web_search" }] }, "tools[0]"],
    ];
    for (const [name, extra, param] of refused) {
      it(`refuses ${name} with 400 unsupported_parameter, sending nothing upstream`, async () => {
        const marker = `refused-${param}-${Math.random()}`;
        const error = await openai.chat.completions.create(chat(marker, extra)).catch((e) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error).toMatchObject({ status: 400, code: "unsupported_parameter", param });
        expect(String(error.message)).toContain(param);
        expect(await received(marker)).toEqual([]);
      });
    }

    it("takes the default tiers, and passes token-billed options on as sent", async () => {
      const marker = `passed-${Math.random()}`;
      const completion = await openai.chat.completions.create(
        chat(marker, {
          service_tier: "default",
          reasoning_effort: "low",
          logprobs: true,
          top_logprobs: 2,
          metadata: { team: "a" },
        }),
      );
      expect(completion.choices[0]?.message.content).toBeTruthy();
      const [sent] = await received(marker);
      expect(sent?.body).toMatchObject({
        service_tier: "default",
        reasoning_effort: "low",
        logprobs: true,
        top_logprobs: 2,
      });
    });

    it("drops unknown fields, names them in x-switchyard-warnings, and never forwards them", async () => {
      const marker = `dropped-${Math.random()}`;
      const { data, response } = await openai.chat.completions
        .create(chat(marker, { surprise_option: { cost: "unbilled" }, another_one: 1 }))
        .withResponse();
      expect(data.choices[0]?.message.content).toBeTruthy();
      const warnings = response.headers.get("x-switchyard-warnings") ?? "";
      expect(warnings).toContain("unsupported:surprise_option");
      expect(warnings).toContain("unsupported:another_one");
      const [sent] = await received(marker);
      expect(sent?.body).toBeDefined();
      expect(Object.keys(sent?.body ?? {})).not.toContain("surprise_option");
      expect(Object.keys(sent?.body ?? {})).not.toContain("another_one");
    });
  });

  describe("on /v1/messages", () => {
    const message = (marker: string, extra: Record<string, unknown>) =>
      ({
        model: "claude-sonnet-4-5",
        max_tokens: 64,
        messages: [{ role: "user", content: `hello ${marker}` }],
        ...extra,
      }) as Anthropic.MessageCreateParamsNonStreaming;

    it("refuses a priority service tier with 400 naming it", async () => {
      const marker = `tier-${Math.random()}`;
      const error = await anthropic.messages
        .create(message(marker, { service_tier: "priority" }))
        .catch((e) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(error.status).toBe(400);
      expect(String(error.message)).toContain("service_tier");
      expect(await received(marker)).toEqual([]);
    });

    it("drops server tools and unknown fields with warnings; client tools and thinking pass", async () => {
      const marker = `native-${Math.random()}`;
      const { data, response } = await anthropic.messages
        .create(
          message(marker, {
            max_tokens: 2048,
            thinking: { type: "enabled", budget_tokens: 1024 },
            tools: [
              { name: "get_weather", input_schema: { type: "object", properties: {} } },
              { type: "web_search_20250305", name: "web_search", max_uses: 3 },
            ],
            mcp_servers: [{ type: "url", url: "https://example.com", name: "x" }],
          }),
        )
        .withResponse();
      expect(data.type).toBe("message");
      const warnings = response.headers.get("x-switchyard-warnings") ?? "";
      expect(warnings).toContain("web_search_20250305");
      expect(warnings).toContain("unsupported:mcp_servers");
      const [sent] = await received(marker);
      expect(sent?.body?.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
      expect(sent?.body?.tools).toEqual([
        { name: "get_weather", input_schema: { type: "object", properties: {} } },
      ]);
      expect(Object.keys(sent?.body ?? {})).not.toContain("mcp_servers");
    });
  });
});
