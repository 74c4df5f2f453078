/**
 * Upstream answers the gateway cannot use — a body cut in half, one larger than the configured
 * limit, a stream longer than its limit — end as a 502 (or, once a stream has started, as the
 * stream's error event), never as a 500, and are charged nothing. Through real HTTP with the
 * official clients, against the sandbox.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const LIMIT = 4096;
/** A reply of this many words is well over {@link LIMIT} bytes. */
const LONG = "[[sandbox:words=900]]";

let gateway: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  gateway = await startTestGateway({
    config: { upstream: { max_response_bytes: LIMIT, max_stream_bytes: LIMIT } },
  });
  key = (await createUser(gateway, { balanceMicros: 50_000_000 })).key;
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
});
afterAll(() => gateway.close());

async function balance(): Promise<number> {
  const response = await gateway.request("/v1/account/balance", { key });
  return ((await response.json()) as { balance_micros: number }).balance_micros;
}

function chatBody(system: string, stream = false) {
  return {
    model: "gpt-4o-mini",
    max_tokens: 2000,
    stream,
    messages: [
      { role: "system", content: system },
      { role: "user", content: "Hello" },
    ],
  };
}

function messagesBody(system: string) {
  return {
    model: "claude-haiku-4-5",
    max_tokens: 2000,
    system,
    messages: [{ role: "user" as const, content: "Hello" }],
  };
}

async function status(promise: Promise<unknown>): Promise<{ status?: number; error?: unknown }> {
  try {
    await promise;
    return {};
  } catch (error) {
    return { status: (error as { status?: number }).status, error };
  }
}

describe("an upstream body that cannot be read", () => {
  it("answers 502 upstream_error on /v1/chat/completions, charging nothing", async () => {
    const before = await balance();
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: chatBody("[[sandbox:malformed=0]]"),
    });
    const error = await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_error",
    });
    expect(error.message).toMatch(/invalid JSON/);
    expect(await balance()).toBe(before);
    const viaSdk = await status(
      openai.chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Hello [[sandbox:malformed=0]]" }],
      }),
    );
    expect(viaSdk.status).toBe(502);
  });

  it("answers 502 api_error on a native /v1/messages route, not a 500", async () => {
    const before = await balance();
    const response = await gateway.request("/v1/messages", {
      key,
      json: messagesBody("[[sandbox:malformed=0]]"),
      headers: { "anthropic-version": "2023-06-01" },
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as {
      type: string;
      error: { type: string; message: string };
    };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("api_error");
    expect(body.error.message).toMatch(/invalid JSON/);
    expect(await balance()).toBe(before);
    const viaSdk = await status(anthropic.messages.create(messagesBody("[[sandbox:malformed=0]]")));
    expect(viaSdk.status).toBe(502);
    expect(viaSdk.error).toBeInstanceOf(Anthropic.InternalServerError);
  });
});

describe("an upstream answer larger than upstream.max_response_bytes", () => {
  it("answers 502 upstream_response_too_large on /v1/chat/completions", async () => {
    const before = await balance();
    const response = await gateway.request("/v1/chat/completions", { key, json: chatBody(LONG) });
    const error = await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_response_too_large",
    });
    expect(error.message).toContain(String(LIMIT));
    expect(await balance()).toBe(before);
    // The same request with a short reply fits.
    const short = await openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello" }],
    });
    expect(short.choices[0]?.message.content).toMatch(/^Sandbox reply/);
  });

  it("answers 502 on a native /v1/messages route", async () => {
    const result = await status(anthropic.messages.create(messagesBody(LONG)));
    expect(result.status).toBe(502);
    expect(String((result.error as Error).message)).toMatch(new RegExp(`${LIMIT} bytes`));
  });

  it("ends a stream past upstream.max_stream_bytes with the error event", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: chatBody(LONG, true),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const last = text.trim().split("\n\n").at(-1) ?? "";
    expect(last).toMatch(/^data: \{"error":/);
    expect(last).toContain(`${LIMIT} bytes`);
    expect(text).not.toContain("[DONE]");

    const native = await gateway.request("/v1/messages", {
      key,
      json: { ...messagesBody(LONG), stream: true },
      headers: { "anthropic-version": "2023-06-01" },
    });
    expect(native.status).toBe(200);
    const events = await native.text();
    expect(events.trim().split("\n\n").at(-1)).toMatch(/^event: error\ndata: .*bytes/);
    expect(events).not.toContain("event: message_stop");
  });
});
