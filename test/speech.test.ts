/**
 * `POST /v1/audio/speech` end to end: the official `openai` client against a real gateway whose
 * DashScope routes point at the in-process sandbox. Audio is checked by parsing it (RIFF header
 * and data length for WAV, every frame header for MP3); ffprobe is used too when installed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeMp3 } from "../src/endpoints/speech/mp3-frames.ts";
import { parseWavHeader, wavDurationSeconds } from "../src/endpoints/speech/wav-header.ts";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const SHORT = "Hello from the gateway.";
const LONG =
  "Hello from the gateway. This sentence is a good deal longer, so the audio made from it " +
  "must last longer too, whichever engine the sandbox speaks with today.";

function hasFfprobe(): boolean {
  try {
    execFileSync("ffprobe", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** ffprobe's reading of the duration, when ffprobe is installed (never required). */
function ffprobeSeconds(bytes: Uint8Array, extension: string): number {
  const file = join(mkdtempSync(join(tmpdir(), "speech-")), `audio.${extension}`);
  writeFileSync(file, bytes);
  const out = execFileSync("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "format=duration",
    "-of",
    "csv=p=0",
    file,
  ]);
  return Number(out.toString().trim());
}

describe("POST /v1/audio/speech", () => {
  let gateway: TestGateway;
  let client: OpenAI;
  let user: { key: string; accountId: string };

  beforeAll(async () => {
    gateway = await startTestGateway();
    user = await createUser(gateway);
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  async function speak(body: OpenAI.Audio.SpeechCreateParams) {
    const response = await client.audio.speech.create(body);
    return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
  }

  it("returns decodable WAV whose duration grows with the input", async () => {
    const short = await speak({
      model: "tts3-flash",
      input: SHORT,
      voice: "Cherry",
      response_format: "wav",
    });
    const long = await speak({
      model: "tts3-flash",
      input: LONG,
      voice: "Cherry",
      response_format: "wav",
    });
    expect(short.response.headers.get("content-type")).toBe("audio/wav");
    expect(short.response.headers.get("x-request-id")).toMatch(/^req_/);
    for (const { bytes } of [short, long]) {
      const parsed = parseWavHeader(bytes);
      expect(parsed.status).toBe("ok");
      if (parsed.status !== "ok") return;
      expect(parsed.info).toMatchObject({ sampleRate: 24000, channels: 1, bitsPerSample: 16 });
      expect((bytes.length - parsed.info.dataOffset) % 2).toBe(0);
    }
    const shortSeconds = wavDurationSeconds(short.bytes);
    const longSeconds = wavDurationSeconds(long.bytes);
    expect(shortSeconds).toBeGreaterThan(0.5);
    expect(longSeconds).toBeGreaterThan(shortSeconds * 2);
    if (hasFfprobe()) {
      expect(ffprobeSeconds(long.bytes, "wav")).toBeCloseTo(longSeconds, 1);
    }
  });

  it("returns decodable MP3 (the default format) whose duration grows with the input", async () => {
    const short = await speak({ model: "tts3-flash", input: SHORT, voice: "Cherry" });
    const long = await speak({
      model: "tts3-flash",
      input: LONG,
      voice: "Cherry",
      response_format: "mp3",
    });
    expect(short.response.headers.get("content-type")).toBe("audio/mpeg");
    const shortMp3 = summarizeMp3(short.bytes);
    const longMp3 = summarizeMp3(long.bytes);
    expect(shortMp3.sampleRate).toBe(24000);
    expect(shortMp3.durationSeconds).toBeGreaterThan(0.5);
    expect(longMp3.durationSeconds).toBeGreaterThan(shortMp3.durationSeconds * 2);
    if (hasFfprobe()) {
      expect(ffprobeSeconds(long.bytes, "mp3")).toBeCloseTo(longMp3.durationSeconds, 0);
    }
  });

  it("speaks an OpenAI voice name as Cherry, and says so", async () => {
    const { response, bytes } = await speak({ model: "tts3-flash", input: SHORT, voice: "alloy" });
    expect(response.headers.get("x-switchyard-voice")).toBe("Cherry");
    expect(response.headers.get("x-switchyard-warnings")).toMatch(/voice/);
    const cherry = await speak({ model: "tts3-flash", input: SHORT, voice: "Cherry" });
    expect(Buffer.from(bytes).equals(Buffer.from(cherry.bytes))).toBe(true);
  });

  it("speaks with Cherry when no voice is given", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: SHORT, response_format: "wav" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-voice")).toBe("Cherry");
    expect(response.headers.get("x-switchyard-warnings")).toBeNull();
    expect(wavDurationSeconds(new Uint8Array(await response.arrayBuffer()))).toBeGreaterThan(0.5);
  });

  it("refuses an unknown voice with a gateway-style 400", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: SHORT, voice: "Nobody" },
    });
    const error = await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "voice",
    });
    expect(error.message).toMatch(/Nobody/);
    await expect(
      client.audio.speech.create({ model: "tts3-flash", input: SHORT, voice: "Nobody" }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("refuses a voice the instruct model does not have", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-instruct-flash", input: SHORT, voice: "Jennifer" },
    });
    await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "voice",
    });
  });

  it("refuses empty input", async () => {
    for (const input of ["", "   "]) {
      const response = await gateway.request("/v1/audio/speech", {
        key: user.key,
        json: { model: "tts3-flash", input, voice: "Cherry" },
      });
      await expectGatewayError(response, {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "input",
      });
    }
  });

  it("refuses a chat model with endpoint_model_mismatch", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "gpt-4o-mini", input: SHORT, voice: "Cherry" },
    });
    await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "endpoint_model_mismatch",
      param: "model",
    });
    await expect(
      client.audio.speech.create({ model: "gpt-4o-mini", input: SHORT, voice: "alloy" }),
    ).rejects.toMatchObject({ status: 400, code: "endpoint_model_mismatch" });
  });

  it("refuses an unknown model with 400 endpoint_model_mismatch naming the speech models", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts-1", input: SHORT, voice: "alloy" },
    });
    const error = await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "endpoint_model_mismatch",
      param: "model",
    });
    expect(error.message).toContain("tts3-flash");
    expect(error.message).toContain("tts3-instruct-flash");
    await expect(
      client.audio.speech.create({ model: "tts3-flahs", input: SHORT, voice: "alloy" }),
    ).rejects.toMatchObject({ status: 400, code: "endpoint_model_mismatch" });
  });

  it("bills the input's code points, held before and settled after", async () => {
    const input = "Grüße 👋🏽 你好, speech!"; // emoji and CJK count one per code point
    const codePoints = [...input].length;
    expect(codePoints).not.toBe(input.length);
    const before = await balance();
    const { response } = await speak({
      model: "tts3-flash",
      input,
      voice: "Serena",
      response_format: "wav",
    });
    expect(response.headers.get("x-switchyard-characters")).toBe(String(codePoints));
    const usage = await gateway.request("/v1/account/usage?model=tts3-flash&limit=1", {
      key: user.key,
    });
    const [record] = ((await usage.json()) as { data: Array<Record<string, unknown>> }).data;
    expect(record).toMatchObject({
      endpoint: "/v1/audio/speech",
      characters: codePoints,
      status: "succeeded",
    });
    // tts3-flash: 100,000 micro-USD per 10k characters.
    expect(record?.cost_micros).toBe(Math.ceil((codePoints * 100_000) / 10_000));
    const after = await balance();
    expect(before.balance_micros - after.balance_micros).toBe(record?.cost_micros);
    expect(after.held_micros).toBe(0);
  });

  async function balance() {
    const response = await gateway.request("/v1/account/balance", { key: user.key });
    return (await response.json()) as { balance_micros: number; held_micros: number };
  }

  it("answers WAV from the instruct model even when MP3 is asked, and takes instructions", async () => {
    const { response, bytes } = await speak({
      model: "tts3-instruct-flash",
      input: SHORT,
      voice: "Serena",
      response_format: "mp3",
      instructions: "Speak slowly and warmly.",
    });
    expect(response.headers.get("content-type")).toBe("audio/wav");
    expect(response.headers.get("x-switchyard-warnings")).toMatch(/response_format/);
    expect(wavDurationSeconds(bytes)).toBeGreaterThan(0.5);
  });

  it("refuses instructions on the basic model", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: SHORT, instructions: "Whisper." },
    });
    await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "instructions",
    });
  });

  it.each([1.5, 10, 0, -3, 1e9])(
    "accepts speed %s and says it is ignored (spec 2.9)",
    async (speed) => {
      const { response } = await speak({
        model: "tts3-flash",
        input: SHORT,
        voice: "Cherry",
        speed,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-switchyard-warnings")).toMatch(/unsupported:speed/);
    },
  );

  it("passes the provider's text through in a gateway-style error", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: "x".repeat(601) },
    });
    const error = await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "InvalidParameter",
    });
    expect(error.message).toBe("Range of input length should be [1, 600]");
    expect(await balance()).toMatchObject({ held_micros: 0 });
  });

  it("quotes the hold of a speech request", async () => {
    const response = await gateway.request("/v1/billing/quote", {
      key: user.key,
      json: { model: "tts3-instruct-flash", input: "x".repeat(200) },
    });
    expect(response.status).toBe(200);
    // tts3-instruct-flash: 115,000 micro-USD per 10k characters.
    expect(await response.json()).toMatchObject({ max_cost_micros: 2300 });
  });

  it("answers a gateway error, charging nothing, when the upstream fails before any audio", async () => {
    const before = await balance();
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: `${SHORT} [[sandbox:malformed=0]]` },
    });
    await expectGatewayError(response, {
      status: 502,
      type: "upstream_error",
      code: "upstream_error",
    });
    expect(await balance()).toEqual(before);
  });

  it("cuts the response and charges nothing when the upstream fails mid-audio", async () => {
    const before = await balance();
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input: `${LONG} [[sandbox:drop=3]]`, response_format: "wav" },
    });
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
    await waitForNoHold();
    expect(await balance()).toEqual(before);
  });

  it("charges the request when the client hangs up mid-audio", async () => {
    const before = await balance();
    const controller = new AbortController();
    const input = `${LONG} [[sandbox:chunk-delay=100]]`;
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "tts3-flash", input },
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    controller.abort();
    await waitForNoHold();
    const charged = Math.ceil(([...input].length * 100_000) / 10_000);
    expect(before.balance_micros - (await balance()).balance_micros).toBe(charged);
  });

  async function waitForNoHold(): Promise<void> {
    for (let i = 0; i < 100 && (await balance()).held_micros > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("streams the audio as it is made: the first bytes come before the upstream is done", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: {
        model: "tts3-flash",
        input: `${LONG} [[sandbox:chunk-delay=40]]`,
        response_format: "wav",
      },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const started = performance.now();
    const first = await reader.read();
    const firstAt = performance.now() - started;
    let total = first.value?.length ?? 0;
    for (let next = await reader.read(); !next.done; next = await reader.read())
      total += next.value.length;
    const allAt = performance.now() - started;
    expect(total).toBeGreaterThan(48_000);
    expect(allAt - firstAt).toBeGreaterThan(800);
  });
});
