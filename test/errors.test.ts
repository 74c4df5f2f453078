import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ERROR_CATALOGUE } from "../src/errors/index.ts";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const MESSAGES = [{ role: "user", content: "hello" }];
const CHAT = { model: "gpt-4o-mini", messages: MESSAGES };
const INVALID = "invalid_request_error";

describe("the error catalogue over HTTP", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  const chat = (body: unknown) => gateway.request("/v1/chat/completions", { key, json: body });

  describe("models", () => {
    it("answers 404 model_not_found for an unknown model", async () => {
      const error = await expectGatewayError(await chat({ ...CHAT, model: "gpt-9-ultra" }), {
        status: 404,
        type: INVALID,
        code: "model_not_found",
        param: "model",
      });
      expect(error.message).toContain("gpt-9-ultra");
    });

    it("answers 400 endpoint_model_mismatch for a model of another endpoint", async () => {
      for (const model of ["text-embedding-v4", "tts3-flash", "motion2.6-t2v", "imgmodel-1"]) {
        const error = await expectGatewayError(await chat({ ...CHAT, model }), {
          status: 400,
          type: INVALID,
          code: "endpoint_model_mismatch",
          param: "model",
        });
        expect(error.message).toContain(model);
        expect(error.message).toContain("/v1/chat/completions");
      }
    });

    it("answers missing_parameter when the model is absent", async () => {
      await expectGatewayError(await chat({ messages: MESSAGES }), {
        status: 400,
        type: INVALID,
        code: "missing_parameter",
        param: "model",
      });
    });

    it("answers invalid_parameter when the model is not a string", async () => {
      await expectGatewayError(await chat({ ...CHAT, model: 42 }), {
        status: 400,
        type: INVALID,
        code: "invalid_parameter",
        param: "model",
      });
    });
  });

  describe("request bodies", () => {
    const post = (body: string, contentType: string) =>
      gateway.request("/v1/chat/completions", {
        key,
        method: "POST",
        headers: { "content-type": contentType },
        body,
      });

    it("answers 400 invalid_json for malformed JSON", async () => {
      for (const body of ['{"model": "gpt-4o-mini",', "{model: 1}", "nope"]) {
        await expectGatewayError(await post(body, "application/json"), {
          status: 400,
          type: INVALID,
          code: "invalid_json",
          param: null,
        });
      }
    });

    it("answers 400 invalid_json for an empty JSON body", async () => {
      await expectGatewayError(await post("", "application/json"), {
        status: 400,
        type: INVALID,
        code: "invalid_json",
      });
    });

    it("answers 415 unsupported_media_type for other content types", async () => {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
        const error = await expectGatewayError(await post(JSON.stringify(CHAT), type), {
          status: 415,
          type: INVALID,
          code: "unsupported_media_type",
        });
        expect(error.message).toContain(type);
      }
    });

    it("rejects a JSON body that is not an object", async () => {
      await expectGatewayError(await post("[1, 2]", "application/json"), {
        status: 400,
        type: INVALID,
        code: "missing_parameter",
        param: "model",
      });
      const onAccount = await gateway.request("/v1/account/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '"just a string"',
      });
      await expectGatewayError(onAccount, { status: 400, type: INVALID, code: "invalid_request" });
    });
  });

  describe("validation", () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["temperature above 2", { temperature: 3 }, "invalid_parameter", "temperature"],
      ["temperature below 0", { temperature: -0.5 }, "invalid_parameter", "temperature"],
      ["top_p above 1", { top_p: 1.5 }, "invalid_parameter", "top_p"],
      [
        "presence_penalty below -2",
        { presence_penalty: -3 },
        "invalid_parameter",
        "presence_penalty",
      ],
      [
        "frequency_penalty above 2",
        { frequency_penalty: 2.5 },
        "invalid_parameter",
        "frequency_penalty",
      ],
      ["five stop sequences", { stop: ["a", "b", "c", "d", "e"] }, "invalid_parameter", "stop"],
      ["a numeric stop", { stop: 5 }, "invalid_parameter", "stop"],
      ["max_tokens 0", { max_tokens: 0 }, "invalid_parameter", "max_tokens"],
      ["a string temperature", { temperature: "hot" }, "invalid_parameter", "temperature"],
      [
        "a message with role wizard",
        { messages: [{ role: "wizard", content: "abracadabra" }] },
        "invalid_parameter",
        "messages[0].role",
      ],
      [
        "a content part of unknown type",
        { messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] },
        "invalid_parameter",
        "messages[0].content[0].type",
      ],
      [
        "a tool message without tool_call_id",
        { messages: [{ role: "tool", content: "42" }] },
        "missing_parameter",
        "messages[0].tool_call_id",
      ],
      ["an empty message list", { messages: [] }, "invalid_parameter", "messages"],
      ["missing messages", { messages: undefined }, "missing_parameter", "messages"],
    ];

    for (const [name, patch, code, param] of cases) {
      it(`rejects ${name}`, async () => {
        const error = await expectGatewayError(await chat({ ...CHAT, ...patch }), {
          status: 400,
          type: INVALID,
          code,
          param,
        });
        expect(error.message).toContain(param);
      });
    }

    it("explains the limit that was broken", async () => {
      const temperature = await expectGatewayError(await chat({ ...CHAT, temperature: 3 }), {
        status: 400,
        type: INVALID,
        code: "invalid_parameter",
      });
      expect(temperature.message).toBe("Invalid 'temperature': must be at most 2.");
      const stop = await expectGatewayError(
        await chat({ ...CHAT, stop: ["1", "2", "3", "4", "5"] }),
        {
          status: 400,
          type: INVALID,
          code: "invalid_parameter",
        },
      );
      expect(stop.message).toBe("Invalid 'stop': must have at most 4 items.");
      const role = await expectGatewayError(
        await chat({ ...CHAT, messages: [{ role: "wizard", content: "x" }] }),
        { status: 400, type: INVALID, code: "invalid_parameter" },
      );
      expect(role.message).toBe(
        "Invalid 'messages[0].role': must be one of 'system', 'developer', 'user', 'assistant', 'tool'.",
      );
    });

    it("accepts the limits themselves", async () => {
      const response = await chat({
        ...CHAT,
        temperature: 2,
        top_p: 0,
        presence_penalty: -2,
        frequency_penalty: 2,
        stop: ["a", "b", "c", "d"],
      });
      expect(response.status).toBe(200);
    });
  });

  describe("paths and methods", () => {
    it("answers 400 for a NUL character in a path parameter or a query value, on every backend", async () => {
      for (const [method, path, param] of [
        ["POST", "/v1/admin/credit-codes/a%00b/revoke", "id"],
        ["POST", "/v1/admin/keys/%00/revoke", "id"],
        ["GET", "/v1/admin/accounts?email=x%00y", "email"],
      ] as const) {
        const answer = await gateway.request(path, { method, key: gateway.adminKey });
        const error = await expectGatewayError(answer, {
          status: 400,
          type: INVALID,
          code: "invalid_request",
        });
        expect(error.param, `${method} ${path}`).toBe(param);
      }
    });

    it("answers 404 not_found for an unknown path, before authentication", async () => {
      for (const [method, path] of [
        ["GET", "/v1/nothing-here"],
        ["POST", "/v2/chat/completions"],
        // `GET /` redirects to the console (test/console-serving.test.ts).
        ["GET", "/favicon-that-is-not-here.ico"],
      ] as const) {
        const error = await expectGatewayError(await gateway.request(path, { method }), {
          status: 404,
          type: INVALID,
          code: "not_found",
        });
        expect(error.message).toBe(`Unknown path: ${method} ${path}`);
      }
    });

    it("answers 405 method_not_allowed with Allow for a known path", async () => {
      const response = await gateway.request("/v1/chat/completions", { key });
      expect(response.headers.get("allow")).toBe("POST");
      await expectGatewayError(response, {
        status: 405,
        type: INVALID,
        code: "method_not_allowed",
      });
      const onParam = await gateway.request("/v1/admin/keys/key_123/revoke", { method: "GET" });
      expect(onParam.headers.get("allow")).toBe("POST");
      expect(onParam.status).toBe(405);
    });

    it("answers 400 invalid_request for an undecodable URL", async () => {
      await expectGatewayError(await gateway.request("/v1/models/%E0%A4%A", { key }), {
        status: 400,
        type: INVALID,
        code: "invalid_request",
      });
    });
  });

  describe("request ids", () => {
    it("sends a fresh req_ id on successes and errors, ignoring a client-sent one", async () => {
      const ids = new Set<string>();
      for (const response of [
        await gateway.request("/healthz"),
        await gateway.request("/v1/models", { key }),
        await gateway.request("/v1/models", { headers: { "x-request-id": "req_client" } }),
        await chat({ ...CHAT, temperature: 9 }),
      ]) {
        const id = response.headers.get("x-request-id") ?? "";
        expect(id).toMatch(/^req_[0-9A-Za-z]{20}$/);
        ids.add(id);
      }
      expect(ids.size).toBe(4);
    });
  });

  it("hides internal failures behind internal_error with the request id", async () => {
    const spy = vi
      .spyOn(gateway.services.store, "countAccounts")
      .mockRejectedValue(new Error("database file /secret/path is corrupt"));
    try {
      const response = await gateway.request("/readyz");
      const id = response.headers.get("x-request-id");
      const error = await expectGatewayError(response, {
        status: 500,
        type: "server_error",
        code: "internal_error",
        param: null,
      });
      expect(error.message).toBe(`Internal error. Request id: ${id}.`);
    } finally {
      spy.mockRestore();
    }
    expect((await gateway.request("/readyz")).status).toBe(200);
  });

  it("every catalogue entry has a 4xx/5xx status, a type and a message", () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      expect(entry.type.length, code).toBeGreaterThan(0);
      expect(entry.message.length, code).toBeGreaterThan(0);
    }
    expect(ERROR_CATALOGUE.invalid_api_key).toMatchObject({ status: 401, type: INVALID });
  });
});

describe("the body size limit", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { server: { port: 0, host: "127.0.0.1", body_limit_bytes: 2048 } },
    });
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  it("answers 413 request_too_large above the limit", async () => {
    const big = { ...CHAT, messages: [{ role: "user", content: "x".repeat(4096) }] };
    const error = await expectGatewayError(
      await gateway.request("/v1/chat/completions", { key, json: big }),
      { status: 413, type: INVALID, code: "request_too_large", param: null },
    );
    expect(error.message).toContain("2048");
    const register = await gateway.request("/v1/account/register", {
      json: { email: "big@example.com", password: "p".repeat(3000) },
    });
    await expectGatewayError(register, {
      status: 413,
      type: INVALID,
      code: "request_too_large",
    });
  });

  it("serves a body just under the limit", async () => {
    const small = { ...CHAT, messages: [{ role: "user", content: "y".repeat(1500) }] };
    const response = await gateway.request("/v1/chat/completions", { key, json: small });
    expect(response.status).toBe(200);
  });
});
