/**
 * Images against a vendor that answers more than asked, and the MCP `edit_image` tool's reads:
 * - a vendor's surplus images are dropped (the hold covers the `n` asked for), so every image a
 *   client receives is billed, over HTTP and through MCP;
 * - `edit_image` refuses a model the key may not use before it reads any URL, and reads its
 *   images one after another within the limit HTTP puts on one upload (25 MiB: 413).
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
import { pngBytes } from "./support/image-fixtures.ts";
import { connectMcp } from "./support/mcp-client.ts";
import { pictorModel } from "./support/vendor-models.ts";

const PER_IMAGE = 20_000;

describe("images: vendor surplus and MCP uploads", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;
  let imageServer: Server;
  let imageUrl: string;
  let imageHits = 0;
  let bigImage: Buffer;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    // A valid PNG header followed by padding: 15 MiB.
    const header = pngBytes(64, 64);
    bigImage = Buffer.concat([header, Buffer.alloc(15 * 1024 * 1024 - header.length)]);
    imageServer = createServer((_request, response) => {
      imageHits++;
      response.writeHead(200, { "content-type": "image/png" });
      response.end(bigImage);
    });
    await new Promise<void>((resolve) => imageServer.listen(0, "127.0.0.1", resolve));
    imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/img.png`;
    gateway = await startTestGateway({
      config: {
        webhooks: { allow_loopback: true },
        catalog: {
          models: [
            {
              id: "rogue-img",
              endpoint: "image-edit",
              family: "legacy-img",
              display_name: "Per-image model on a vendor that answers more than asked",
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
            pictorModel("rogue-pictor", vendor.url, { perImage: PER_IMAGE }),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await vendor?.close();
    await new Promise((resolve) => imageServer?.close(resolve));
  });

  const balance = (key: string) => balanceOf(gateway, key);

  it("openai-images: n=1 and the vendor answers 3 images: one is delivered and billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    vendor.answer({
      body: {
        created: 1,
        data: [
          { url: "https://cdn.example/1.png" },
          { url: "https://cdn.example/2.png" },
          { url: "https://cdn.example/3.png" },
        ],
      },
    });
    const before = await balance(user.key);
    const response = await gateway.request("/v1/images/generations", {
      key: user.key,
      json: { model: "rogue-img", prompt: "x", n: 1, size: "1024x1024", response_format: "url" },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown[] };
    const charged = before - (await balance(user.key));
    expect({ delivered: body.data.length, charged }).toEqual({ delivered: 1, charged: PER_IMAGE });
    expect(response.headers.get("x-switchyard-warnings")).toMatch(/answered 3 images for 1 asked/);
  });

  it("pictor via MCP generate_image: the vendor answers 3 images: one is delivered and billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    vendor.answer({
      body: {
        request_id: "r1",
        output: {
          choices: [
            {
              finish_reason: "stop",
              message: {
                role: "assistant",
                content: [
                  { image: "https://cdn.example/a.png" },
                  { image: "https://cdn.example/b.png" },
                  { image: "https://cdn.example/c.png" },
                ],
              },
            },
          ],
        },
        usage: { image_count: 3, width: 1024, height: 1024 },
      },
    });
    const before = await balance(user.key);
    const client = await connectMcp(gateway, user.key);
    try {
      const result = await client.callTool({
        name: "generate_image",
        arguments: { model: "rogue-pictor", prompt: "x" },
      });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as { images: unknown[]; cost_micros: number };
      const charged = before - (await balance(user.key));
      expect({ delivered: structured.images.length, charged }).toEqual({
        delivered: 1,
        charged: PER_IMAGE,
      });
    } finally {
      await client.close();
    }
  });

  it("MCP edit_image refuses a model the key may not use before reading any URL", async () => {
    const restricted = await createUser(gateway, {
      balanceMicros: 10_000_000,
      keyOptions: { models: ["gpt-4o-mini"] },
    });
    imageHits = 0;
    const client = await connectMcp(gateway, restricted.key);
    try {
      const result = await client.callTool({
        name: "edit_image",
        arguments: {
          model: "imgmodel-2",
          prompt: "x",
          images: Array.from({ length: 4 }, () => ({ url: imageUrl })),
        },
      });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]?.text).toMatch(/^403 model_not_allowed/);
      expect({ fetchedBeforeRefusal: imageHits }).toEqual({ fetchedBeforeRefusal: 0 });
    } finally {
      await client.close();
    }
  });

  it("MCP edit_image answers 413 to 2 x 15 MiB of images, as HTTP does", async () => {
    const user = await createUser(gateway, { balanceMicros: 100_000_000 });
    imageHits = 0;
    const form = new FormData();
    form.append("model", "imgmodel-2");
    form.append("prompt", "x");
    form.append("image[]", new Blob([new Uint8Array(bigImage)], { type: "image/png" }), "a.png");
    form.append("image[]", new Blob([new Uint8Array(bigImage)], { type: "image/png" }), "b.png");
    const http = await gateway.request("/v1/images/edits", {
      key: user.key,
      method: "POST",
      body: form,
    });
    expect(http.status).toBe(413);
    await http.arrayBuffer().catch(() => undefined);

    const client = await connectMcp(gateway, user.key);
    try {
      const result = await client.callTool({
        name: "edit_image",
        arguments: {
          model: "imgmodel-2",
          prompt: "x",
          images: [{ url: imageUrl }, { url: imageUrl }],
        },
      });
      const first = (result.content as { type: string; text?: string }[])[0];
      expect({
        isError: result.isError ?? false,
        firstBlock: first?.type === "text" ? first.text?.slice(0, 40) : first?.type,
      }).toEqual({ isError: true, firstBlock: expect.stringMatching(/^413 request_too_large/) });
    } finally {
      await client.close();
    }
  });
});
