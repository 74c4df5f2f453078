/**
 * `POST /v1/images/edits`: the rules of spec 2.4 per model, each refusal in the gateway dialect
 * with the exact body shape; quality aliases; 402 and 415.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { jpegBytes, pngBytes } from "./support/image-fixtures.ts";

const INVALID = "invalid_request_error";

type Part = [string, string | Blob, string?];

describe("image edit rules", () => {
  let gateway: TestGateway;
  let key: string;

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
    gateway = await startTestGateway();
    key = (await createUser(gateway, { balanceMicros: 100_000_000 })).key;
  });
  afterAll(() => gateway.close());

  const field = (name: string, value: string): Part => [name, value];
  const base = (model = "imgmodel-2"): Part[] => [
    field("model", model),
    field("prompt", "x"),
    ["image", file(pngBytes(64, 64, { alpha: true })), "a.png"],
  ];
  const rejected: [string, Part[], string, string][] = [
    ["n above 10", [...base(), field("n", "11")], "invalid_parameter", "n"],
    ["a 2K size", [...base(), field("size", "2048x2048")], "unsupported_size", "size"],
    [
      "a legacy size on imgmodel",
      [...base(), field("size", "256x256")],
      "unsupported_size",
      "size",
    ],
    [
      "an imgmodel size on legacy-img-2",
      [...base("legacy-img-2"), field("size", "1536x1024")],
      "unsupported_size",
      "size",
    ],
    [
      "a transparent JPEG",
      [...base(), field("background", "transparent"), field("output_format", "jpeg")],
      "invalid_parameter",
      "background",
    ],
    [
      "output_format on legacy-img-2",
      [...base("legacy-img-2"), field("output_format", "webp")],
      "invalid_parameter",
      "output_format",
    ],
    [
      "quality high on legacy-img-2",
      [...base("legacy-img-2"), field("quality", "high")],
      "invalid_parameter",
      "quality",
    ],
    [
      "two images to legacy-img-2",
      [...base("legacy-img-2"), ["image[]", file(pngBytes(64, 64)), "b.png"]],
      "too_many_images",
      "image",
    ],
    [
      "a JPEG to legacy-img-2",
      [
        field("model", "legacy-img-2"),
        field("prompt", "x"),
        ["image", file(jpegBytes(64, 64)), "a.jpg"],
      ],
      "invalid_image_format",
      "image",
    ],
    [
      "an opaque image without mask to legacy-img-2",
      [
        field("model", "legacy-img-2"),
        field("prompt", "x"),
        ["image", file(pngBytes(64, 64)), "a.png"],
      ],
      "invalid_image",
      "image",
    ],
    [
      "a non-square image to legacy-img-2",
      [
        field("model", "legacy-img-2"),
        field("prompt", "x"),
        ["image", file(pngBytes(64, 32, { alpha: true })), "a.png"],
      ],
      "invalid_image",
      "image",
    ],
    [
      "no image",
      [field("model", "imgmodel-2"), field("prompt", "x")],
      "missing_parameter",
      "image",
    ],
    [
      "an image sent as text",
      [...base(), field("image[]", "not a file")],
      "invalid_parameter",
      "image",
    ],
    ["an unknown field", [...base(), field("style", "vivid")], "invalid_parameter", "style"],
    ["a chat model", base("gpt-4o-mini"), "endpoint_model_mismatch", "model"],
  ];

  it.each(rejected)("answers 400 to %s", async (_name, parts, code, param) => {
    await expectGatewayError(await edit(parts), { status: 400, type: INVALID, code, param });
  });

  it("maps quality aliases to native values", async () => {
    const standard = await edit([...base("imgmodel-1"), field("quality", "standard")]);
    expect(((await standard.json()) as { quality: string }).quality).toBe("medium");
    const hd = await edit([...base("imgmodel-1"), field("quality", "hd")]);
    expect(((await hd.json()) as { quality: string }).quality).toBe("high");
    const legacy = await edit([...base("legacy-img-2"), field("quality", "hd")]);
    expect(legacy.status).toBe(200);
  });

  it("answers 402, message only, when the balance cannot cover the hold", async () => {
    const poor = await createUser(gateway, { balanceMicros: 100 });
    const response = await edit(base(), poor.key);
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body.error)).toEqual(["message"]);
  });

  it("answers 415 to a JSON body", async () => {
    const response = await gateway.request("/v1/images/edits", {
      key,
      json: { model: "imgmodel-2", prompt: "x" },
    });
    const error = await expectGatewayError(response, {
      status: 415,
      type: INVALID,
      code: "unsupported_media_type",
    });
    expect(error.message).toMatch(/multipart\/form-data/);
  });
});
