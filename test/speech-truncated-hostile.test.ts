/**
 * Speech against a vendor that answers "success" with audio that is truncated or empty.
 * The contract: a failed request is charged nothing, and a client never gets a short file that
 * looks complete (docs/speech.md "Response").
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wavHeader } from "../src/endpoints/speech/wav-header.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { dashScopeSpeechModel } from "./support/vendor-models.ts";

const SPEECH_PRICE = 100_000;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const speechModel = (id: string, baseUrl: string) =>
  dashScopeSpeechModel(id, baseUrl, SPEECH_PRICE);

/** A WAV file whose header announces `announced` bytes of audio, with only `actual` of them. */
function truncatedWav(announced: number, actual: number): Buffer {
  const header = wavHeader({
    sampleRate: 24_000,
    channels: 1,
    bitsPerSample: 16,
    dataBytes: announced,
  });
  const pcm = Buffer.alloc(actual);
  for (let i = 0; i < actual; i += 2) pcm.writeInt16LE(Math.round(8000 * Math.sin(i / 20)), i);
  return Buffer.concat([Buffer.from(header), pcm]);
}

describe("speech, truncated or empty audio from a 'successful' vendor", () => {
  let gateway: TestGateway;
  let server: Server;
  let vendorUrl: string;
  let handler: Handler = (_q, r) => r.end();

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => handler(request, response));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    vendorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: { catalog: { models: [speechModel("rogue-tts", vendorUrl)] } },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function waitForNoHold(key: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const response = await gateway.request("/v1/account/balance", { key });
      const body = (await response.json()) as { held_micros: number };
      if (body.held_micros === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function speak(format: "wav" | "mp3") {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    let completed = true;
    let bytes = Buffer.alloc(0);
    let status = 0;
    try {
      // A connection cut before or during the body (no final chunk) is not a complete file.
      const response = await gateway.request("/v1/audio/speech", {
        key: user.key,
        json: {
          model: "rogue-tts",
          input: "hello there",
          voice: "Cherry",
          response_format: format,
        },
      });
      status = response.status;
      bytes = Buffer.from(await response.arrayBuffer());
    } catch {
      completed = false;
    }
    await waitForNoHold(user.key);
    const charged = before - (await balanceOf(gateway, user.key));
    // "Delivered as complete": a 200 whose body ended cleanly.
    return {
      status,
      completedCleanly: status === 200 && completed,
      bytes,
      charged,
    };
  }

  it("inline WAV whose data chunk is cut short (48,000 bytes announced, 200 sent) is not a complete, billed 200", async () => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          request_id: "r-trunc-inline",
          output: {
            finish_reason: "stop",
            audio: { data: truncatedWav(48_000, 200).toString("base64") },
          },
          usage: { characters: 11 },
        }),
      );
    };
    const result = await speak("wav");
    expect({ completedCleanly: result.completedCleanly, charged: result.charged }).toEqual({
      completedCleanly: false,
      charged: 0,
    });
  });

  it("downloaded WAV that the result host cuts short (chunked, clean end) is not a complete, billed 200", async () => {
    handler = (request, response) => {
      if (request.url?.startsWith("/files/")) {
        // Chunked (no content-length): the host ends the body cleanly after a fraction of the audio.
        response.writeHead(200, { "content-type": "audio/wav" });
        response.write(truncatedWav(480_000, 4_000));
        response.end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          request_id: "r-trunc-url",
          output: { finish_reason: "stop", audio: { url: `${vendorUrl}/files/a.wav` } },
          usage: { characters: 11 },
        }),
      );
    };
    const result = await speak("wav");
    expect({ completedCleanly: result.completedCleanly, charged: result.charged }).toEqual({
      completedCleanly: false,
      charged: 0,
    });
  });

  it("an SSE stream that finishes ('stop') without any audio is a 502 charged nothing, not an empty billed 200", async () => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        `id:1\nevent:result\ndata:${JSON.stringify({
          request_id: "r-empty",
          output: { finish_reason: "stop", audio: { data: "", id: "a1" } },
          usage: { characters: 11 },
        })}\n\n`,
      );
      response.end();
    };
    const result = await speak("wav");
    expect({ status: result.status, charged: result.charged }).toEqual({ status: 502, charged: 0 });
  });

  it("an SSE stream that finishes without any audio, asked as MP3: 502 charged nothing", async () => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        `id:1\nevent:result\ndata:${JSON.stringify({
          request_id: "r-empty-mp3",
          output: { finish_reason: "stop", audio: { data: "", id: "a1" } },
          usage: { characters: 11 },
        })}\n\n`,
      );
      response.end();
    };
    const result = await speak("mp3");
    expect({ status: result.status, charged: result.charged }).toEqual({ status: 502, charged: 0 });
  });
});
