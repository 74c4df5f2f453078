/**
 * Speech whose upstream finished the audio (`finish_reason: "stop"`) and then misbehaves
 * (keeps the connection open past the idle timeout, or sends a garbled trailing event). The
 * client has received the whole audio; "every delivered unit is billed".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { dashScopeSpeechModel } from "./support/vendor-models.ts";

const SPEECH_PRICE = 100_000;
const INPUT = "hello there, this is the whole text";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const speechModel = (id: string, baseUrl: string) =>
  dashScopeSpeechModel(id, baseUrl, SPEECH_PRICE);

function pcm(bytes: number): string {
  const buffer = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 2) buffer.writeInt16LE(Math.round(8000 * Math.sin(i / 20)), i);
  return buffer.toString("base64");
}

function event(id: number, body: unknown): string {
  return `id:${id}\nevent:result\ndata:${JSON.stringify(body)}\n\n`;
}

/** Three audio events, the last one `stop` with the usage, as DashScope streams them. */
function wholeAudio(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (let i = 1; i <= 3; i++) {
    response.write(
      event(i, {
        request_id: "r-stop",
        output: {
          finish_reason: i === 3 ? "stop" : "null",
          audio: { data: pcm(4800), id: "a1" },
        },
        ...(i === 3 ? { usage: { characters: INPUT.length } } : {}),
      }),
    );
  }
}

describe("speech, vendor misbehaves after the audio is complete", () => {
  let gateway: TestGateway;
  let server: Server;
  let handler: Handler = (_q, r) => r.end();
  const open: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => handler(request, response));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const vendorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        upstream: { idle_timeout_ms: 400 },
        catalog: { models: [speechModel("rogue-tts", vendorUrl)] },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    for (const response of open) response.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function speak() {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "rogue-tts", input: INPUT, voice: "Cherry", response_format: "wav" },
    });
    // Read what arrives, whether or not the body ends cleanly.
    let received = 0;
    const reader = response.body!.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read())
        received += next.value.length;
    } catch {
      // cut
    }
    for (let i = 0; i < 100; i++) {
      const b = (await (
        await gateway.request("/v1/account/balance", { key: user.key })
      ).json()) as {
        held_micros: number;
      };
      if (b.held_micros === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const charged = before - (await balanceOf(gateway, user.key));
    return { status: response.status, audioBytesReceived: received - 44, charged };
  }

  const price = Math.ceil((INPUT.length * SPEECH_PRICE) / 10_000);

  it("the vendor keeps the stream open after 'stop': the complete audio delivered is billed", async () => {
    handler = (_request, response) => {
      wholeAudio(response);
      open.push(response); // never ended: the idle timeout fires after the audio is complete
    };
    const result = await speak();
    expect(result).toEqual({ status: 200, audioBytesReceived: 3 * 4800, charged: price });
  });

  it("the vendor sends a garbled event after 'stop': the complete audio delivered is billed", async () => {
    handler = (_request, response) => {
      wholeAudio(response);
      // The audio has reached the client by the time the trailing garbage comes.
      setTimeout(() => response.end("id:4\nevent:result\ndata:{not json\n\n"), 200);
    };
    const result = await speak();
    expect(result).toEqual({ status: 200, audioBytesReceived: 3 * 4800, charged: price });
  });
});
