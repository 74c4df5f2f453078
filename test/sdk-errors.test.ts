/**
 * Every error shape the gateway renders, read by the official SDKs: `openai` for the gateway and
 * provider dialects (and the spec's fixed 402 and quota 429), `@anthropic-ai/sdk` for
 * `/v1/messages`. Each SDK must expose the status, the message and a code, while the fields the
 * spec requires (section 7) stay as it says.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

/** The error an official SDK raised for a call that must fail. */
async function failure<C extends abstract new (...args: never[]) => unknown>(
  call: PromiseLike<unknown>,
  type: C,
): Promise<InstanceType<C>> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as InstanceType<C>;
  }
  throw new Error("expected the call to fail");
}

const hello = [{ role: "user" as const, content: "hello" }];
const pictor = (model: string, content: Record<string, string>[]) => ({
  model,
  input: { messages: [{ role: "user", content }] },
});

describe("error bodies through the official SDKs", () => {
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;
  const openaiWith = (apiKey: string) =>
    new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 });
  const anthropicWith = (apiKey: string) =>
    new Anthropic({ baseURL: gateway.url, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway)).key;
    openai = openaiWith(key);
  });
  afterAll(() => gateway.close());

  describe("openai, gateway dialect", () => {
    it("exposes status, code, type, param and message of a chat error", async () => {
      const error = await failure(
        openai.chat.completions.create({ model: "gpt-9-ultra", messages: hello }),
        OpenAI.NotFoundError,
      );
      expect(error.status).toBe(404);
      expect(error.code).toBe("model_not_found");
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBe("model");
      expect(error.message).toMatch(/^404 The model 'gpt-9-ultra' does not exist/);
      expect(error.requestID).toMatch(/^req_/);
    });

    it("exposes a bad key's 401", async () => {
      const error = await failure(openaiWith("sk-wrong").models.list(), OpenAI.AuthenticationError);
      expect(error.status).toBe(401);
      expect(error.code).toBe("invalid_api_key");
      expect(error.message).toContain("Invalid API key");
    });

    it("exposes embeddings, speech and image errors", async () => {
      const embedding = await failure(
        openai.embeddings.create({ model: "vec-4", input: "x", dimensions: 7 }),
        OpenAI.BadRequestError,
      );
      expect(embedding.code).toBe("invalid_parameter");
      expect(embedding.param).toBe("dimensions");
      expect(embedding.message).toContain("dimensions");

      const speech = await failure(
        openai.audio.speech.create({ model: "tts3-flash", input: "x", voice: "Nobody" }),
        OpenAI.BadRequestError,
      );
      expect(speech.code).toBe("invalid_parameter");
      expect(speech.param).toBe("voice");
      expect(speech.message).toContain("Nobody");

      const image = await failure(
        openai.images.generate({ model: "imgmodel-2", prompt: "x", size: "7x7" as "auto" }),
        OpenAI.BadRequestError,
      );
      expect(image.code).toBe("unsupported_size");
      expect(image.message).toContain("7x7");
    });

    it("exposes the 402's message, the body holding `message` only as the spec says", async () => {
      const poor = await createUser(gateway, { balanceMicros: 1 });
      const request = { model: "gpt-4o-mini", messages: hello, max_tokens: 100 };
      const raw = await gateway.request("/v1/chat/completions", { key: poor.key, json: request });
      expect(raw.status).toBe(402);
      expect(await raw.json()).toEqual({
        error: { message: expect.stringMatching(/^Insufficient balance/) },
      });

      const error = await failure(
        openaiWith(poor.key).chat.completions.create(request),
        OpenAI.APIError,
      );
      expect(error.status).toBe(402);
      expect(error.message).toMatch(/^402 Insufficient balance: this request may cost up to/);
      expect(error.error).toEqual({ message: expect.stringMatching(/^Insufficient balance/) });
    });

    it("exposes a quota 429's message and code; the body keeps the spec's fields", async () => {
      const limited = await createUser(gateway, { keyOptions: { rpm: 1 } });
      const client = openaiWith(limited.key);
      await client.chat.completions.create({ model: "gpt-4o-mini", messages: hello });

      const raw = await gateway.request("/v1/chat/completions", {
        key: limited.key,
        json: { model: "gpt-4o-mini", messages: hello },
      });
      expect(raw.status).toBe(429);
      const body = (await raw.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        code: "Throttling.RateQuota",
        message: expect.stringMatching(
          /^Requests rate limit exceeded: this key allows 1 requests per minute; retry in \d+ s\.$/,
        ),
        request_id: raw.headers.get("x-request-id"),
      });

      const error = await failure(
        client.chat.completions.create({ model: "gpt-4o-mini", messages: hello }),
        OpenAI.RateLimitError,
      );
      expect(error.status).toBe(429);
      expect(error.code).toBe("Throttling.RateQuota");
      expect(error.type).toBe("rate_limit_error");
      expect(error.message).toMatch(
        /^429 Requests rate limit exceeded: this key allows 1 requests per minute; retry in \d+ s\.$/,
      );
      expect(error.headers?.get("retry-after")).toMatch(/^\d+$/);
    });
  });

  describe("openai, provider dialect (`pictor` images)", () => {
    it("exposes a 400 InvalidParameter; the body keeps code, message and request_id", async () => {
      const body = pictor("pictor-image-edit", [{ text: "x" }]);
      const raw = await gateway.request("/v1/images/generations", { key, json: body });
      expect(raw.status).toBe(400);
      const parsed = (await raw.json()) as Record<string, unknown>;
      expect(parsed).toEqual({
        code: "InvalidParameter",
        message: expect.stringContaining("1 to 3 image blocks"),
        request_id: raw.headers.get("x-request-id"),
        error: {
          message: parsed.message,
          type: "invalid_request_error",
          code: "InvalidParameter",
        },
      });

      const error = await failure(
        openai.post("/images/generations", { body }),
        OpenAI.BadRequestError,
      );
      expect(error.code).toBe("InvalidParameter");
      expect(error.message).toContain("1 to 3 image blocks");
    });

    it("exposes a vendor's refusal and the quota 429 on the same path", async () => {
      const refused = await failure(
        openai.post("/images/generations", {
          body: pictor("pictor-image-2.0", [{ text: "busy [[sandbox:status=429]]" }]),
        }),
        OpenAI.RateLimitError,
      );
      expect(refused.code).toBe("Throttling.RateQuota");
      expect(refused.message).toMatch(/^429 ./);

      const limited = await createUser(gateway, { keyOptions: { rpm: 1 } });
      const client = openaiWith(limited.key);
      const body = pictor("pictor-image-2.0", [{ text: "a lighthouse" }]);
      await client.post("/images/generations", { body });
      const quota = await failure(
        client.post("/images/generations", { body }),
        OpenAI.RateLimitError,
      );
      expect(quota.code).toBe("Throttling.RateQuota");
      expect(quota.type).toBe("rate_limit_error");
      expect(quota.message).toContain("rate limit exceeded");
    });
  });

  describe("@anthropic-ai/sdk, /v1/messages", () => {
    const request = { model: "claude-haiku-4-5", max_tokens: 100, messages: hello };

    it("exposes status, type, message and code of a refusal", async () => {
      const error = await failure(
        anthropicWith(key).messages.create({ ...request, model: "claude-nonexistent" }),
        Anthropic.NotFoundError,
      );
      expect(error.status).toBe(404);
      expect(error.type).toBe("not_found_error");
      expect(error.errorCode).toBe("model_not_found");
      expect(error.apiMessage).toContain("claude-nonexistent");
      expect(error.message).toContain("claude-nonexistent");
    });

    it("exposes a bad key, an empty balance and a quota", async () => {
      const badKey = await failure(
        anthropicWith("sk-wrong").messages.create(request),
        Anthropic.AuthenticationError,
      );
      expect(badKey.type).toBe("authentication_error");
      expect(badKey.errorCode).toBe("invalid_api_key");

      const poor = await createUser(gateway, { balanceMicros: 1 });
      const broke = await failure(
        anthropicWith(poor.key).messages.create(request),
        Anthropic.APIError,
      );
      expect(broke.status).toBe(402);
      expect(broke.type).toBe("billing_error");
      expect(broke.errorCode).toBe("insufficient_balance");
      expect(broke.apiMessage).toMatch(/^Insufficient balance/);

      const limited = await createUser(gateway, { keyOptions: { rpm: 1 } });
      const client = anthropicWith(limited.key);
      await client.messages.create(request);
      const quota = await failure(client.messages.create(request), Anthropic.RateLimitError);
      expect(quota.type).toBe("rate_limit_error");
      expect(quota.errorCode).toBe("rate_limited");
      expect(quota.apiMessage).toMatch(/^Requests rate limit exceeded: this key allows 1 requests/);
    });
  });
});
