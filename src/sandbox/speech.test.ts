import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWavSamples } from "./audio-wav.ts";
import { MULTIMODAL_PATH } from "./dashscope-multimodal.ts";
import { buildSandboxApp } from "./server.ts";

let app: FastifyInstance;
beforeAll(async () => {
  app = buildSandboxApp();
  await app.ready();
});
afterAll(() => app.close());

const AUTH = { authorization: "Bearer sk-sandbox" };

function post(body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: "POST",
    url: MULTIMODAL_PATH,
    headers: { ...AUTH, ...headers },
    payload: body as object,
  });
}

function tts(text: string, extra: Record<string, unknown> = {}, model = "qwen3-tts-flash") {
  return { model, input: { text, voice: "Cherry", ...extra } };
}

interface TtsEvent {
  output: { finish_reason: string; audio: { data: string; url?: string } };
  usage?: { characters: number };
}

/** The `data:` objects of a native DashScope stream. */
function events(text: string): TtsEvent[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      expect(lines[1]).toBe("event:result");
      expect(lines[2]).toBe(":HTTP_STATUS/200");
      return JSON.parse(lines.find((line) => line.startsWith("data:"))!.slice(5)) as TtsEvent;
    });
}

describe("sandbox multimodal-generation", () => {
  it("asks for a key, in DashScope's envelope", async () => {
    const response = await app.inject({ method: "POST", url: MULTIMODAL_PATH, payload: tts("hi") });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      request_id: expect.any(String),
      code: "InvalidApiKey",
      message: "Invalid API-key provided.",
    });
  });

  it("answers an unknown model with 400 Model not exist.", async () => {
    for (const model of ["pictor-nothing", "qwen3-tts-realtime"]) {
      const response = await post({ model, input: { text: "hi", voice: "Cherry" } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        code: "InvalidParameter",
        message: "Model not exist.",
      });
    }
    expect((await post({ input: {} })).json()).toMatchObject({ code: "BadRequest.EmptyModel" });
  });

  it("answers bad JSON in DashScope's envelope", async () => {
    const response = await app.inject({
      method: "POST",
      url: MULTIMODAL_PATH,
      headers: { ...AUTH, "content-type": "application/json" },
      payload: "{not json",
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: "InvalidParameter",
      request_id: expect.any(String),
    });
  });

  it("injects faults as DashScope errors", async () => {
    const response = await post(tts("hi"), { "x-sandbox-fault": "status=429;retry-after=3" });
    expect(response.statusCode).toBe(429);
    expect(response.headers["retry-after"]).toBe("3");
    expect(response.json()).toMatchObject({ code: "Throttling.RateQuota" });
    const directive = await post(tts("hi [[sandbox:status=500]]"));
    expect(directive.json()).toMatchObject({ code: "InternalError" });
  });
});

describe("sandbox Qwen3-TTS", () => {
  it("answers JSON with a WAV link on the result host and the characters used", async () => {
    const response = await post(tts("Hello, 世界!"));
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      output: {
        finish_reason: "stop",
        audio: { data: "", id: expect.stringMatching(/^audio_/), expires_at: expect.any(Number) },
      },
      usage: { characters: 10 },
      request_id: expect.any(String),
    });
    const url = new URL(body.output.audio.url);
    expect(url.searchParams.get("Expires")).toBe(String(body.output.audio.expires_at));
    const file = await app.inject({ method: "GET", url: url.pathname + url.search });
    expect(file.statusCode).toBe(200);
    expect(file.headers["content-type"]).toBe("audio/wav");
    const { samples, sampleRate } = readWavSamples(file.rawPayload);
    expect(sampleRate).toBe(24000);
    expect(samples.length / sampleRate).toBeGreaterThan(0.3);
  });

  it("refuses a download that carries a key, a bad signature or an unknown file", async () => {
    const url = new URL((await post(tts("Hello"))).json().output.audio.url);
    const withKey = await app.inject({
      method: "GET",
      url: url.pathname + url.search,
      headers: AUTH,
    });
    expect(withKey.statusCode).toBe(400);
    expect(withKey.body).toMatch(/<Code>InvalidArgument<\/Code>/);
    const forged = await app.inject({
      method: "GET",
      url: `${url.pathname}?Expires=99999999999&Signature=x`,
    });
    expect(forged.statusCode).toBe(403);
    // Another file id under this link's signature does not pass either.
    const other = url.pathname.replace(/[0-9a-f]{32}/, "0".repeat(32));
    expect((await app.inject({ method: "GET", url: other + url.search })).statusCode).toBe(403);
  });

  it("streams base64 PCM events ending with finish_reason stop when SSE is asked", async () => {
    const response = await post(tts("Hello there, streaming world."), {
      "x-dashscope-sse": "enable",
    });
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(response.body.startsWith("id:1\nevent:result\n:HTTP_STATUS/200\ndata:{")).toBe(true);
    const all = events(response.body);
    const final = all.at(-1)!;
    expect(final.output).toMatchObject({
      finish_reason: "stop",
      audio: { data: "", url: expect.any(String) },
    });
    expect(final.usage).toEqual({ characters: 29 });
    const chunks = all.slice(0, -1);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.output.finish_reason).toBe("null");
    const bytes = chunks.reduce(
      (sum, chunk) => sum + Buffer.from(chunk.output.audio.data, "base64").length,
      0,
    );
    expect(bytes / 48000).toBeGreaterThan(1);
  });

  it("leaves usage out with no-usage, and garbles the stream with malformed", async () => {
    const quiet = await post(tts("Hello"), { "x-sandbox-fault": "no-usage" });
    expect(quiet.json().usage).toBeUndefined();
    const garbled = await post(tts("Hello there"), {
      "x-dashscope-sse": "enable",
      "x-sandbox-fault": "malformed=1",
    });
    expect(garbled.body).toMatch(/data:\{"output":\{"audio":\n\n$/);
  });

  it("validates like DashScope", async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ model: "qwen3-tts-flash" }, "BadRequest.EmptyInput", /input/],
      [tts(""), "InvalidParameter", /non-empty/],
      [tts("x".repeat(601)), "InvalidParameter", /\[1, 600\]/],
      [tts("hi", { voice: "Nobody" }), "InvalidParameter", /Voice 'Nobody'/],
      [
        tts("hi", { voice: "Jennifer" }, "qwen3-tts-instruct-flash"),
        "InvalidParameter",
        /Jennifer/,
      ],
      [tts("hi", { language_type: "Klingon" }), "InvalidParameter", /language_type/],
    ];
    for (const [body, code, message] of cases) {
      const response = await post(body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.json()).toMatchObject({ code, message: expect.stringMatching(message) });
    }
  });

  it("accepts dated snapshots, instructions in input or parameters", async () => {
    const dated = await post(tts("hi", {}, "qwen3-tts-flash-2025-09-18"));
    expect(dated.statusCode).toBe(200);
    const instruct = await post({
      model: "qwen3-tts-instruct-flash",
      input: { text: "hi", voice: "Serena" },
      parameters: { instructions: "Cheerfully.", optimize_instructions: true },
    });
    expect(instruct.statusCode).toBe(200);
  });
});
