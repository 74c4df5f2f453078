/**
 * Image generations against a vendor that answers 200 with pictures that are not whole
 * pictures, or with an impossible echoed size and no usage. A failed request is charged
 * nothing; every delivered picture is billed.
 */
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { pictorModel } from "./support/vendor-models.ts";

const PER_IMAGE = 20_000;
/** micro-USD per 1M tokens */
const INPUT_PRICE = 8_000_000;
const OUTPUT_PRICE = 32_000_000;

/** The first 33 bytes of a real 1024x1024 RGBA PNG: signature and IHDR, no pixels, no IEND. */
function truncatedPng(): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write("IHDR", 4, "latin1");
  ihdr.writeUInt32BE(1024, 8);
  ihdr.writeUInt32BE(1024, 12);
  ihdr[16] = 8; // bit depth
  ihdr[17] = 6; // RGBA
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

describe("images, vendor answers 200 with broken pictures or impossible sizes", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    const route = {
      vendor: "rogue",
      adapter: "openai-images",
      base_url: vendor.url,
    };
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
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
              routes: [{ ...route, upstream_model: "dall-e-2" }],
            },
            pictorModel("rogue-pictor", vendor.url, { perImage: PER_IMAGE }),
            {
              id: "rogue-gpt-img",
              endpoint: "image-edit",
              family: "imgmodel",
              display_name: "Token-priced model on a misbehaving vendor",
              owned_by: "self-hosted",
              capabilities: {
                sizes: ["auto", "1024x1024", "1024x1536", "1536x1024"],
                qualities: ["auto", "low", "medium", "high"],
                output_formats: ["png", "jpeg", "webp"],
                mask: true,
                multiple_images: true,
                free_form_size: true,
              },
              pricing: { per_1m_tokens: { input: INPUT_PRICE, output: OUTPUT_PRICE } },
              routes: [{ ...route, upstream_model: "gpt-image-1" }],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await vendor?.close();
  });

  it("a b64_json PNG cut after its header (no pixels, no IEND) is a 502, not delivered and billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const png = truncatedPng().toString("base64");
    vendor.answer({ body: { created: 1, data: [{ b64_json: png }] } });
    const before = await balanceOf(gateway, user.key);
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
    const charged = before - (await balanceOf(gateway, user.key));
    expect({ status: response.status, delivered: text.includes(png), charged }).toEqual({
      status: 502,
      delivered: false,
      charged: 0,
    });
  });

  it("no usage and an impossible echoed size ('0x0'): the delivered 1024x1024 high picture's output is still billed", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const png = PNG.sync.write(new PNG({ width: 8, height: 8 })).toString("base64");
    vendor.answer({
      body: { created: 1, data: [{ b64_json: png }], size: "0x0", quality: "high" },
    });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/images/generations", {
      key: user.key,
      json: { model: "rogue-gpt-img", prompt: "a red door", size: "1024x1024", quality: "high" },
    });
    const body = (await response.json()) as { usage?: { output_tokens: number } };
    const charged = before - (await balanceOf(gateway, user.key));
    // GPT-image's table: 1024x1024 at high quality is 4160 output tokens.
    const outputCost = Math.ceil((4160 * OUTPUT_PRICE) / 1_000_000);
    expect({
      status: response.status,
      outputTokens: body.usage?.output_tokens,
      chargedAtLeastOutput: charged >= outputCost,
    }).toEqual({ status: 200, outputTokens: 4160, chargedAtLeastOutput: true });
  });

  it("pictor: a 200 whose 'image' is an error text, not a link, is a 502 charged nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    vendor.answer({
      body: {
        request_id: "r-pictor",
        output: {
          choices: [
            {
              finish_reason: "stop",
              message: {
                role: "assistant",
                content: [{ image: "InternalError: image generation failed" }],
              },
            },
          ],
        },
        usage: { image_count: 1, width: 1024, height: 1024 },
      },
    });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/images/generations", {
      key: user.key,
      json: {
        model: "rogue-pictor",
        input: { messages: [{ role: "user", content: [{ text: "a lighthouse" }] }] },
      },
    });
    const text = await response.text();
    const charged = before - (await balanceOf(gateway, user.key));
    expect({
      status: response.status,
      deliveredAsImage: text.includes("InternalError: image generation failed"),
      charged,
    }).toEqual({ status: 502, deliveredAsImage: false, charged: 0 });
  });
});
