/**
 * Media fetching and relaying against a misbehaving vendor or a hostile client: what they can
 * make the gateway fetch, deliver or bill. Each test states the correct behaviour and failed
 * before its fix.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";

const SPEECH_PRICE = 100_000;
const PER_IMAGE = 20_000;

function speechModel(id: string, baseUrl: string) {
  return {
    id,
    endpoint: "speech",
    family: "tts3",
    display_name: `Speech on a misbehaving vendor (${id})`,
    owned_by: "self-hosted",
    capabilities: { voices: ["Cherry"], audio_formats: ["mp3", "wav"], instructions: false },
    pricing: { per_10k_characters: SPEECH_PRICE },
    routes: [
      {
        vendor: "rogue",
        adapter: "dashscope",
        base_url: baseUrl,
        upstream_model: "qwen3-tts-flash",
      },
    ],
  };
}

describe("media, hostile: misbehaving vendors", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;
  let internal: Server;
  let internalUrl: string;
  let internalHits = 0;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    // Stands for something inside the operator's network (metadata service, admin port).
    internal = createServer((_request, response) => {
      internalHits++;
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("INTERNAL-SECRET aws_secret_access_key=abc123");
    });
    await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
    internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/latest/meta-data/`;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            speechModel("rogue-tts", vendor.url),
            {
              id: "rogue-img",
              endpoint: "image-edit",
              family: "legacy-img",
              display_name: "Per-image model on a misbehaving vendor",
              owned_by: "self-hosted",
              capabilities: {
                sizes: ["256x256", "512x512", "1024x1024"],
                qualities: ["standard"],
                output_formats: ["png"],
                mask: true,
                multiple_images: false,
                free_form_size: false,
              },
              pricing: { per_image: { default: PER_IMAGE } },
              routes: [
                {
                  vendor: "rogue",
                  adapter: "openai-images",
                  base_url: vendor.url,
                  upstream_model: "dall-e-2",
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
    await vendor?.close();
    await new Promise((resolve) => internal?.close(resolve));
  });

  const balance = (key: string) => balanceOf(gateway, key);

  it("speech: an audio URL in the vendor's JSON answer is not fetched when it points inside the network", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    internalHits = 0;
    vendor.answer({
      body: {
        request_id: "r1",
        output: { finish_reason: "stop", audio: { url: internalUrl } },
        usage: { characters: 5 },
      },
    });
    const before = await balance(user.key);
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "rogue-tts", input: "hello", voice: "Cherry", response_format: "wav" },
    });
    const text = await response.text().catch(() => "");
    const charged = before - (await balance(user.key));
    expect({
      status: response.status,
      internalFetched: internalHits,
      leaked: text.includes("INTERNAL-SECRET"),
      charged,
    }).toEqual({ status: 502, internalFetched: 0, leaked: false, charged: 0 });
  });

  it("speech: inline 'audio' that is not a WAV file is a 502, not delivered as audio/wav and billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    vendor.answer({
      body: {
        request_id: "r2",
        output: {
          finish_reason: "stop",
          audio: {
            data: Buffer.from("<html>Service temporarily unavailable</html>").toString("base64"),
          },
        },
        usage: { characters: 5 },
      },
    });
    const before = await balance(user.key);
    const response = await gateway.request("/v1/audio/speech", {
      key: user.key,
      json: { model: "rogue-tts", input: "hello", voice: "Cherry", response_format: "wav" },
    });
    const bytes = Buffer.from(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
    const charged = before - (await balance(user.key));
    expect({
      status: response.status,
      deliveredHtml: bytes.toString("latin1").includes("<html>"),
      charged,
    }).toEqual({ status: 502, deliveredHtml: false, charged: 0 });
  });

  it("images: a vendor 'image' that is not an image (HTML in b64_json) is a 502, not delivered and billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const html = "<html><body>502 Bad Gateway</body></html>";
    vendor.answer({
      body: { created: 1, data: [{ b64_json: Buffer.from(html).toString("base64") }] },
    });
    const before = await balance(user.key);
    const response = await gateway.request("/v1/images/generations", {
      key: user.key,
      json: {
        model: "rogue-img",
        prompt: "x",
        n: 1,
        size: "1024x1024",
        response_format: "b64_json",
      },
    });
    const text = await response.text();
    const charged = before - (await balance(user.key));
    expect({
      status: response.status,
      deliveredHtml: text.includes(Buffer.from(html).toString("base64")),
      charged,
    }).toEqual({
      status: 502,
      deliveredHtml: false,
      charged: 0,
    });
  });
});

describe("media, hostile: MCP edit_image reads", () => {
  let gateway: TestGateway;
  let images: Server;
  let imageUrl: string;
  let hits = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  beforeAll(async () => {
    const { pngBytes } = await import("./support/image-fixtures.ts");
    // 4 MiB of image: a valid PNG header and padding, served slowly.
    const header = pngBytes(64, 64);
    const body = Buffer.concat([header, Buffer.alloc(4 * 1024 * 1024 - header.length)]);
    images = createServer((_request, response) => {
      hits++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      response.on("close", () => inFlight--);
      setTimeout(() => {
        response.writeHead(200, { "content-type": "image/png" });
        response.end(body);
      }, 1500);
    });
    await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/img.png`;
    // Loopback allowed only so that the test's image server counts as reachable.
    gateway = await startTestGateway({ config: { webhooks: { allow_loopback: true } } });
  });
  afterAll(async () => {
    await gateway?.close();
    images?.closeAllConnections();
    await new Promise((resolve) => images?.close(resolve));
  });

  it("MCP edit_image: a key with no balance and concurrency 1 cannot make the gateway read images in parallel without limit", async () => {
    const { connectMcp } = await import("./support/mcp-client.ts");
    const broke = await createUser(gateway, {
      balanceMicros: 0,
      keyOptions: { concurrency: 1, rpm: 2 },
    });
    hits = 0;
    maxInFlight = 0;
    const client = await connectMcp(gateway, broke.key);
    try {
      const calls = Array.from({ length: 8 }, () =>
        client.callTool(
          {
            name: "edit_image",
            arguments: {
              model: "imgmodel-2",
              prompt: "x",
              images: [{ url: imageUrl }, { url: imageUrl }, { url: imageUrl }],
            },
          },
          undefined,
          { timeout: 30_000 },
        ),
      );
      const results = await Promise.all(calls);
      expect(results.every((result) => result.isError)).toBe(true);
      // 8 calls x 3 images were 24 reads of 4 MiB, 8 at once, for a key that can pay for none.
      expect({ maxParallelReads: maxInFlight, reads: hits }).toEqual({
        maxParallelReads: 0,
        reads: 0,
      });
      expect(JSON.stringify(results[0]?.content)).toMatch(/insufficient_balance/);
    } finally {
      await client.close();
    }
  }, 30_000);

  it("MCP edit_image: a paying account reads for two calls at a time; the others are refused with 429", async () => {
    const { connectMcp } = await import("./support/mcp-client.ts");
    const paying = await createUser(gateway, { balanceMicros: 50_000_000 });
    hits = 0;
    maxInFlight = 0;
    const client = await connectMcp(gateway, paying.key);
    try {
      const calls = Array.from({ length: 6 }, () =>
        client.callTool(
          {
            name: "edit_image",
            arguments: { model: "imgmodel-2", prompt: "x", images: [{ url: imageUrl }] },
          },
          undefined,
          { timeout: 30_000 },
        ),
      );
      const results = await Promise.all(calls);
      const refused = results.filter((result) =>
        JSON.stringify(result.content).includes("concurrency_limited"),
      );
      expect(refused).toHaveLength(4);
      expect(maxInFlight).toBeLessThanOrEqual(2);
      expect(hits).toBe(2);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe("media, hostile: image uploads and the event loop", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("images/edits: a PNG of a million empty chunks does not hold the event loop (security.md rule 4)", async () => {
    const { pngBytes } = await import("./support/image-fixtures.ts");
    const { longestStall } = await import("./support/loop-stall.ts");
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    // A 16x16 RGB PNG header (no alpha) followed by ~1.4 million empty 12-byte chunks and no
    // IDAT: 16 MiB, under the 20 MiB per-file limit. pngHasAlpha walks every chunk, and
    // checkEdit runs three times per request.
    const real = pngBytes(16, 16);
    const chunks = Math.floor((16 * 1024 * 1024 - 33) / 12);
    const file = Buffer.alloc(33 + chunks * 12);
    real.copy(file, 0, 0, 33);
    file[25] = 2; // colour type RGB
    for (let i = 0; i < chunks; i++) file.write("zzzz", 33 + i * 12 + 4, "latin1");
    const form = new FormData();
    form.append("model", "imgmodel-2");
    form.append("prompt", "x");
    form.append("image", new Blob([new Uint8Array(file)], { type: "image/png" }), "a.png");
    const { stallMs } = await longestStall(async () => {
      const response = await gateway.request("/v1/images/edits", {
        key: user.key,
        method: "POST",
        body: form,
      });
      await response.arrayBuffer();
    });
    expect(stallMs).toBeLessThan(500);
  }, 20_000);
});
