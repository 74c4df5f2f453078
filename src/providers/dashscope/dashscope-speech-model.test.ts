import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../../sandbox/server.ts";
import { type SpeechResult, UpstreamError } from "../../spec/index.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { buildTtsRequest, DashScopeSpeechModel } from "./dashscope-speech-model.ts";

let sandbox: RunningSandbox;
let http: HttpClient;

beforeAll(async () => {
  sandbox = await startSandbox();
  http = createHttpClient();
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});

function model(transport: "sse" | "url" = "sse", fault?: string): DashScopeSpeechModel {
  const client: HttpClient = fault
    ? {
        ...http,
        post: (url, init) =>
          http.post(url, { ...init, headers: { ...init.headers, "x-sandbox-fault": fault } }),
      }
    : http;
  return new DashScopeSpeechModel({
    baseUrl: `${sandbox.url}/dashscope/api/v1`,
    apiKey: "sk-sandbox",
    http: client,
    transport,
  });
}

const OPTIONS = {
  upstreamModel: "qwen3-tts-flash",
  text: "Hello there, this is the sandbox speaking.",
  voice: "Cherry",
  format: "mp3" as const,
};

async function drain(result: SpeechResult): Promise<{ bytes: Buffer; chunks: number }> {
  const parts: Uint8Array[] = [];
  for await (const part of result.audio) parts.push(part);
  return { bytes: Buffer.concat(parts), chunks: parts.length };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (UpstreamError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

describe("DashScopeSpeechModel", () => {
  it("puts text, voice and instructions in input", () => {
    expect(
      buildTtsRequest({
        ...OPTIONS,
        upstreamModel: "qwen3-tts-instruct-flash",
        instructions: "Slowly.",
      }),
    ).toEqual({
      model: "qwen3-tts-instruct-flash",
      input: { text: OPTIONS.text, voice: "Cherry", instructions: "Slowly." },
    });
    expect(buildTtsRequest(OPTIONS)).toEqual({
      model: "qwen3-tts-flash",
      input: { text: OPTIONS.text, voice: "Cherry" },
    });
  });

  it("streams 24 kHz PCM chunk by chunk over SSE, with the billed characters at the end", async () => {
    const result = await model().doSpeech(OPTIONS);
    expect(result).toMatchObject({ format: "pcm", sampleRate: 24000 });
    expect(result.characters).toBeUndefined();
    const { bytes, chunks } = await drain(result);
    expect(chunks).toBeGreaterThan(3);
    expect(bytes.length % 2).toBe(0);
    expect(bytes.length / 48000).toBeGreaterThan(1); // seconds
    expect(result.characters).toBe([...OPTIONS.text].length);
    expect(result.upstreamRequestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("downloads the WAV file of the JSON answer without sending the API key", async () => {
    // The sandbox's result host refuses requests that carry an Authorization header.
    const result = await model("url").doSpeech(OPTIONS);
    expect(result).toMatchObject({ format: "wav", characters: [...OPTIONS.text].length });
    const { bytes } = await drain(result);
    expect(bytes.toString("ascii", 0, 4)).toBe("RIFF");
    expect(bytes.readUInt32LE(24)).toBe(24000);
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
  });

  it("makes longer audio for longer text", async () => {
    const short = await drain(await model().doSpeech({ ...OPTIONS, text: "Hi." }));
    const long = await drain(await model().doSpeech({ ...OPTIONS, text: OPTIONS.text.repeat(3) }));
    expect(long.bytes.length).toBeGreaterThan(short.bytes.length * 3);
  });

  it("passes DashScope's error text and code through", async () => {
    const error = await failure(model().doSpeech({ ...OPTIONS, voice: "Nobody" }));
    expect(error).toMatchObject({
      kind: "http",
      status: 400,
      vendorCode: "InvalidParameter",
      retryable: false,
    });
    expect(error.message).toBe("Voice 'Nobody' is not supported by model qwen3-tts-flash.");
    expect(error.upstreamRequestId).toMatch(/^[0-9a-f-]{36}$/);
    const instruct = await failure(
      model().doSpeech({
        ...OPTIONS,
        upstreamModel: "qwen3-tts-instruct-flash",
        voice: "Jennifer",
      }),
    );
    expect(instruct.status).toBe(400);
  });

  it("marks throttling and server errors retryable", async () => {
    const throttled = await failure(model("sse", "status=429;retry-after=2").doSpeech(OPTIONS));
    expect(throttled).toMatchObject({
      status: 429,
      vendorCode: "Throttling.RateQuota",
      retryable: true,
    });
    expect(await failure(model("url", "status=500").doSpeech(OPTIONS))).toMatchObject({
      status: 500,
      retryable: true,
    });
  });

  it("fails the audio when the stream is cut, garbled or ends early", async () => {
    for (const fault of ["drop=2", "malformed=2"]) {
      const result = await model("sse", fault).doSpeech(OPTIONS);
      const error = await failure(drain(result));
      expect(["connect", "protocol", "timeout"]).toContain(error.kind);
    }
  });

  it("fails a JSON answer whose connection is dropped", async () => {
    const error = await failure(model("url", "drop=0").doSpeech(OPTIONS));
    expect(error.kind).toBe("connect");
  });

  it("stops the upstream call when the client goes away", async () => {
    const controller = new AbortController();
    const result = await model("sse", "chunk-delay=200").doSpeech({
      ...OPTIONS,
      abortSignal: controller.signal,
    });
    const iterator = result.audio[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    const error = await failure(iterator.next());
    expect(error.kind).toBe("aborted");
  });
});
