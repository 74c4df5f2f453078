/**
 * `POST /v1/images/edits` (spec 2.4, section 7): the `openai` package's `images.edit` against
 * `imgmodel-2` (two images; a mask), every documented 400 in the gateway dialect with the exact
 * body shape, `response_format` per family, billing (tokens, per image, 402).
 */
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { describeImage, GIF_BYTES, jpegBytes, pngBytes } from "./support/image-fixtures.ts";

const INVALID = "invalid_request_error";

/** A model without mask support, added through operator configuration. */
const NO_MASK_MODEL = {
  id: "imgmodel-nomask",
  endpoint: "image-edit",
  family: "imgmodel",
  display_name: "ImgModel without masks",
  owned_by: "openai",
  capabilities: {
    sizes: ["auto", "1024x1024", "1024x1536", "1536x1024"],
    qualities: ["auto", "low", "medium", "high"],
    output_formats: ["png", "jpeg", "webp"],
    mask: false,
    multiple_images: true,
  },
  pricing: { per_1m_tokens: { input: 8000000, output: 32000000 } },
  routes: [{ vendor: "openai-images", upstream_model: "gpt-image-1" }],
};

type Part = [string, string | Blob, string?];

describe("image edits", () => {
  let gateway: TestGateway;
  let key: string;
  let client: OpenAI;

  const edit = (parts: Part[], withKey = key) => {
    const form = new FormData();
    for (const [name, value, filename] of parts) {
      if (typeof value === "string") form.append(name, value);
      else form.append(name, value, filename);
    }
    return gateway.request("/v1/images/edits", { key: withKey, method: "POST", body: form });
  };
  const file = (bytes: Buffer, type = "image/png") => new Blob([new Uint8Array(bytes)], { type });

  beforeAll(async () => {
    gateway = await startTestGateway({ config: { catalog: { models: [NO_MASK_MODEL] } } });
    key = (await createUser(gateway, { balanceMicros: 100_000_000 })).key;
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it("edits two images with the openai package (imgmodel-2), with token usage and billing", async () => {
    const result = await client.images.edit({
      model: "imgmodel-2",
      image: [
        await toFile(pngBytes(64, 64), "first.png", { type: "image/png" }),
        await toFile(jpegBytes(64, 64), "second.jpg", { type: "image/jpeg" }),
      ],
      prompt: "put both in one scene",
      n: 2,
      quality: "high",
    });
    expect(result.data).toHaveLength(2);
    for (const item of result.data ?? []) {
      expect(describeImage(Buffer.from(item.b64_json ?? "", "base64"))).toEqual({
        type: "png",
        width: 1024,
        height: 1024,
      });
    }
    expect(result.quality).toBe("high");
    expect(result.size).toBe("1024x1024");
    expect(result.output_format).toBe("png");
    // Two 64x64 inputs: one 512 px tile each (65 + 129).
    expect(result.usage?.input_tokens_details).toEqual({ text_tokens: 5, image_tokens: 388 });
    expect(result.usage?.output_tokens).toBe(2 * 4160);
    expect(result.usage?.total_tokens).toBe(393 + 8320);

    const raw = await client.images
      .edit({ model: "imgmodel-2", image: await toFile(pngBytes(64, 64), "a.png"), prompt: "x" })
      .withResponse();
    const usage = raw.data.usage!;
    // imgmodel-2: 8 micro-USD per input token, 32 per output token.
    expect(raw.response.headers.get("x-switchyard-cost-micros")).toBe(
      String(usage.input_tokens * 8 + usage.output_tokens * 32),
    );
  });

  it("edits with a mask through the openai package", async () => {
    const result = await client.images.edit({
      model: "imgmodel-2",
      image: await toFile(pngBytes(96, 64), "photo.png"),
      mask: await toFile(pngBytes(96, 64, { alpha: true }), "mask.png"),
      prompt: "a red door",
      size: "1536x1024",
      output_format: "webp",
      background: "transparent",
    });
    const bytes = Buffer.from(result.data?.[0]?.b64_json ?? "", "base64");
    expect(describeImage(bytes)).toEqual({ type: "webp", width: 1536, height: 1024 });
    expect(result.background).toBe("transparent");
  });

  it("refuses a mask whose size differs from the image's", async () => {
    const error = await expectGatewayError(
      await edit([
        ["model", "imgmodel-2"],
        ["prompt", "x"],
        ["image", file(pngBytes(64, 64)), "a.png"],
        ["mask", file(pngBytes(32, 32, { alpha: true })), "mask.png"],
      ]),
      { status: 400, type: INVALID, code: "invalid_mask", param: "mask" },
    );
    expect(error.message).toMatch(/32x32 but the image is 64x64/);
    await expectGatewayError(
      await edit([
        ["model", "imgmodel-2"],
        ["prompt", "x"],
        ["image", file(pngBytes(64, 64)), "a.png"],
        ["mask", file(jpegBytes(64, 64), "image/png"), "mask.png"],
      ]),
      { status: 400, type: INVALID, code: "invalid_mask", param: "mask" },
    );
    await expectGatewayError(
      await edit([
        ["model", "imgmodel-2"],
        ["prompt", "x"],
        ["image", file(pngBytes(64, 64)), "a.png"],
        ["mask", file(pngBytes(64, 64)), "mask.png"],
      ]),
      { status: 400, type: INVALID, code: "invalid_mask", param: "mask" },
    );
  });

  it("reads the format from the bytes: a GIF renamed .png is refused", async () => {
    const error = await expectGatewayError(
      await edit([
        ["model", "imgmodel-2"],
        ["prompt", "x"],
        ["image", file(GIF_BYTES), "cat.png"],
      ]),
      { status: 400, type: INVALID, code: "invalid_image_format", param: "image" },
    );
    expect(error.message).toBe(
      "The file 'cat.png' is a GIF image; imgmodel-2 accepts PNG, JPEG and WebP.",
    );
    const sdk = await client.images
      .edit({ model: "imgmodel-2", image: await toFile(GIF_BYTES, "cat.png"), prompt: "x" })
      .catch((caught: unknown) => caught);
    expect(sdk).toBeInstanceOf(OpenAI.BadRequestError);
    expect((sdk as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("invalid_image_format");
  });

  it("refuses a mask to a model without mask support", async () => {
    const error = await expectGatewayError(
      await edit([
        ["model", "imgmodel-nomask"],
        ["prompt", "x"],
        ["image", file(pngBytes(64, 64)), "a.png"],
        ["mask", file(pngBytes(64, 64, { alpha: true })), "mask.png"],
      ]),
      { status: 400, type: INVALID, code: "mask_not_supported", param: "mask" },
    );
    expect(error.message).toMatch(/imgmodel-nomask/);
  });

  it("answers every field of spec 2.4 for a legacy-img-2 edit through the openai package", async () => {
    const result = await client.images.edit({
      model: "legacy-img-2",
      image: await toFile(pngBytes(64, 64, { alpha: true }), "a.png", { type: "image/png" }),
      prompt: "add a hat",
      size: "256x256",
    });
    expect(typeof result.created).toBe("number");
    expect(result.data).toHaveLength(1);
    expect(describeImage(Buffer.from(result.data?.[0]?.b64_json ?? "", "base64"))).toMatchObject({
      width: 256,
      height: 256,
    });
    expect(result.background).toBe("opaque");
    expect(result.output_format).toBe("png");
    expect(result.quality).toBe("standard");
    expect(result.size).toBe("256x256");
    // Priced per picture: the tokens are the gateway's own count (docs/images.md).
    const usage = result.usage!;
    expect(usage.input_tokens_details).toEqual({ text_tokens: 3, image_tokens: 194 });
    expect(usage.input_tokens).toBe(197);
    expect(usage.output_tokens).toBe(Math.ceil((1056 * 256 * 256) / (1024 * 1024)));
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  });

  it("answers b64_json to response_format=url on imgmodel-*, and a link on legacy-img-2", async () => {
    const response = await edit([
      ["model", "imgmodel-1"],
      ["prompt", "x"],
      ["response_format", "url"],
      ["image", file(pngBytes(64, 64)), "a.png"],
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-warnings")).toMatch(/response_format/);
    const body = (await response.json()) as { data: Record<string, string>[] };
    expect(Object.keys(body.data[0] ?? {})).toEqual(["b64_json"]);

    const legacy = await edit([
      ["model", "legacy-img-2"],
      ["prompt", "x"],
      ["size", "512x512"],
      ["response_format", "url"],
      ["image", file(pngBytes(64, 64, { alpha: true })), "a.png"],
    ]);
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get("x-switchyard-cost-micros")).toBe("18000");
    const legacyBody = (await legacy.json()) as { created: number; data: { url: string }[] };
    expect(Object.keys(legacyBody).sort()).toEqual(
      ["background", "created", "data", "output_format", "quality", "size", "usage"].sort(),
    );
    const download = await fetch(legacyBody.data[0]?.url ?? "");
    expect(describeImage(Buffer.from(await download.arrayBuffer()))).toEqual({
      type: "png",
      width: 512,
      height: 512,
    });
  });
});
