import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import {
  freeFormSize,
  ImagesInvalid,
  imagesUsage,
  inputImageTokens,
  outputImageTokens,
  parseImagesRequest,
} from "./openai-images-request.ts";

function png(width: number, height: number, alpha: boolean): Uint8Array {
  const image = new PNG({ width, height, colorType: alpha ? 6 : 2 });
  image.data.fill(200);
  return PNG.sync.write(image, { colorType: alpha ? 6 : 2 });
}

function invalid(run: () => unknown): ImagesInvalid {
  try {
    run();
  } catch (error) {
    if (error instanceof ImagesInvalid) return error;
    throw error;
  }
  throw new Error("expected ImagesInvalid");
}

describe("sandbox OpenAI images rules", () => {
  it("applies the free-form size rule", () => {
    expect(freeFormSize("1536x864")).toEqual({ width: 1536, height: 864 });
    expect(freeFormSize("3840x1280")).toEqual({ width: 3840, height: 1280 });
    expect(freeFormSize("1000x1000")).toBeUndefined();
    expect(freeFormSize("3840x1264")).toBeUndefined();
  });

  it("counts tokens like GPT-image", () => {
    expect(inputImageTokens(1024, 1024)).toBe(194);
    expect(inputImageTokens(4096, 1024)).toBe(65 + 129 * 4);
    expect(outputImageTokens(1024, 1536, "high")).toBe(6240);
    expect(outputImageTokens(2048, 2048, "low")).toBe(272 * 4);
    const request = parseImagesRequest({
      model: "gpt-image-1",
      prompt: "two words",
      n: 2,
      quality: "low",
    });
    expect(imagesUsage(request)).toEqual({
      input_tokens: 2,
      input_tokens_details: { text_tokens: 2, image_tokens: 0 },
      output_tokens: 544,
      total_tokens: 546,
    });
  });

  it("keeps DALL·E 2's rules: one square PNG with transparency, links by default", () => {
    const request = parseImagesRequest(
      { model: "dall-e-2", prompt: "p", size: "512x512" },
      { images: [{ filename: "a.png", bytes: png(8, 8, true) }] },
    );
    expect(request).toMatchObject({
      width: 512,
      height: 512,
      responseFormat: "url",
      quality: "standard",
    });
    const opaque = invalid(() =>
      parseImagesRequest(
        { model: "dall-e-2", prompt: "p" },
        { images: [{ filename: "a.png", bytes: png(8, 8, false) }] },
      ),
    );
    expect(opaque.message).toBe(
      "Invalid input image - format must be in ['RGBA', 'LA', 'L'], got RGB.",
    );
    expect(
      invalid(() => parseImagesRequest({ model: "dall-e-2", prompt: "p", output_format: "png" }))
        .code,
    ).toBe("unknown_parameter");
  });

  it("checks masks and formats of GPT-image edits", () => {
    const image = { filename: "a.png", bytes: png(8, 8, false) };
    expect(
      invalid(() =>
        parseImagesRequest(
          { model: "gpt-image-1", prompt: "p" },
          { images: [image], mask: { filename: "m.png", bytes: png(4, 4, true) } },
        ),
      ).param,
    ).toBe("mask");
    expect(
      invalid(() =>
        parseImagesRequest(
          { model: "gpt-image-1", prompt: "p" },
          { images: [{ filename: "x.png", bytes: new Uint8Array([1, 2, 3]) }] },
        ),
      ).code,
    ).toBe("unsupported_file_mimetype");
    expect(
      parseImagesRequest(
        { model: "gpt-image-1", prompt: "p" },
        { images: [{ filename: "w.png", bytes: png(300, 100, false) }] },
      ),
    ).toMatchObject({ width: 1536, height: 1024, imageTokens: inputImageTokens(300, 100) });
    expect(
      invalid(() =>
        parseImagesRequest({
          model: "gpt-image-1",
          prompt: "p",
          background: "transparent",
          output_format: "jpeg",
        }),
      ).param,
    ).toBe("background");
  });
});
