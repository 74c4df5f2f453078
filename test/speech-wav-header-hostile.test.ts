/**
 * A downloaded speech file whose WAV header carries a big chunk before `data` (a `LIST` chunk
 * of 32 MiB, within max_response_bytes). The header used to be read by joining every network
 * chunk to all the bytes before it: time quadratic in its size (48 MiB measured 34 s of CPU
 * and 1.4 s event-loop stalls). A header past MAX_WAV_HEADER_BYTES is now the vendor's error.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";

const LIST_BYTES = 32 * 1024 * 1024;

function wavWithBigList(): Buffer {
  const riff = Buffer.alloc(12);
  riff.write("RIFF", 0, "latin1");
  riff.writeUInt32LE(0xffffffff, 4);
  riff.write("WAVE", 8, "latin1");
  const listHead = Buffer.alloc(8);
  listHead.write("LIST", 0, "latin1");
  listHead.writeUInt32LE(LIST_BYTES, 4);
  const list = Buffer.alloc(LIST_BYTES, 0x20);
  const fmt = Buffer.alloc(24);
  fmt.write("fmt ", 0, "latin1");
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(1, 10);
  fmt.writeUInt32LE(24_000, 12);
  fmt.writeUInt32LE(48_000, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const dataHead = Buffer.alloc(8);
  dataHead.write("data", 0, "latin1");
  dataHead.writeUInt32LE(4800, 4);
  return Buffer.concat([riff, listHead, list, fmt, dataHead, Buffer.alloc(4800)]);
}

describe("speech, a downloaded WAV with a big chunk before its data", () => {
  let gateway: TestGateway;
  let server: Server;
  const file = wavWithBigList();

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        if (request.url?.startsWith("/files/")) {
          response.writeHead(200, { "content-type": "audio/wav", "content-length": file.length });
          response.end(file);
          return;
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            request_id: "r-list",
            output: { finish_reason: "stop", audio: { url: `${vendorUrl}/files/a.wav` } },
            usage: { characters: 5 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const vendorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            {
              id: "rogue-tts",
              endpoint: "speech",
              family: "tts3",
              display_name: "Speech on a misbehaving vendor",
              owned_by: "self-hosted",
              capabilities: {
                voices: ["Cherry"],
                audio_formats: ["mp3", "wav"],
                instructions: false,
              },
              pricing: { per_10k_characters: 100_000 },
              routes: [
                {
                  vendor: "rogue",
                  adapter: "dashscope",
                  base_url: vendorUrl,
                  upstream_model: "qwen3-tts-flash",
                },
              ],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("refuses a header chunk of 32 MiB before the audio: 502, charged nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "rogue-tts", input: "hello", voice: "Cherry", response_format: "wav" },
    });
    const body = (await response.json()) as { error?: { code?: string } };
    expect({ status: response.status, code: body.error?.code }).toEqual({
      status: 502,
      code: "upstream_error",
    });
    expect(before - (await balanceOf(gateway, user.key))).toBe(0);
  }, 60_000);
});
