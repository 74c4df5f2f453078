import { PNG as PNGImage } from "pngjs";
import { describe, expect, it } from "vitest";
import type { ImageUpload } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import type { HttpClient, UpstreamResponse } from "../kit/http-client.ts";
import { buildMultipartBody } from "./multipart-body.ts";
import {
  buildEditParts,
  buildGenerationRequest,
  OpenAIImagesModel,
} from "./openai-images-model.ts";
import { readImagesAnswer } from "./openai-images-response.ts";

/** A whole (1×1) PNG file, as a vendor's b64_json carries one. */
const PNG_BASE64 = (() => {
  const image = new PNGImage({ width: 1, height: 1 });
  return PNGImage.sync.write(image).toString("base64");
})();

const PNG: ImageUpload = {
  bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]),
  filename: "a.png",
  format: "png",
  width: 1,
  height: 1,
};

function answer(status: number, body: unknown): UpstreamResponse {
  const text = JSON.stringify(body);
  return {
    status,
    headers: { "x-request-id": "req_upstream" },
    body: Object.assign((async function* () {})(), {
      text: async () => text,
      json: async () => JSON.parse(text) as unknown,
      destroy: () => {},
    }),
  };
}

function recordingClient(response: UpstreamResponse) {
  const calls: { url: string; headers: Record<string, string>; body: string | Uint8Array }[] = [];
  const http: HttpClient = {
    post: async (url, init) => {
      calls.push({ url, headers: init.headers, body: init.body });
      return response;
    },
    get: async () => response,
    download: () => Promise.reject(new Error("no downloads here")),
    withTimeouts: () => http,
    close: async () => {},
  };
  return { http, calls };
}

describe("OpenAI images requests", () => {
  it("sends only the settings given, sizes as WxH", () => {
    expect(
      buildGenerationRequest({
        upstreamModel: "gpt-image-1",
        prompt: "p",
        n: 2,
        size: { width: 1536, height: 864 },
        quality: "high",
        outputCompression: 50,
        moderation: "low",
      }),
    ).toEqual({
      model: "gpt-image-1",
      prompt: "p",
      n: 2,
      size: "1536x864",
      quality: "high",
      output_compression: 50,
      moderation: "low",
    });
  });

  it("builds a multipart edit that a standard parser reads back, with image[] for several", async () => {
    const parts = buildEditParts({
      upstreamModel: "gpt-image-1.5",
      prompt: "two",
      n: 1,
      size: "auto",
      images: [PNG, { ...PNG, filename: "b.webp", format: "webp" }],
      mask: { ...PNG, filename: "m.png" },
    });
    const { body, contentType } = buildMultipartBody(parts);
    const form = await new Response(new Uint8Array(body), {
      headers: { "content-type": contentType },
    }).formData();
    expect(form.get("model")).toBe("gpt-image-1.5");
    expect(form.get("size")).toBe("auto");
    const images = form.getAll("image[]") as File[];
    expect(images.map((file) => [file.name, file.type])).toEqual([
      ["a.png", "image/png"],
      ["b.webp", "image/webp"],
    ]);
    expect(new Uint8Array(await images[0]!.arrayBuffer())).toEqual(PNG.bytes);
    expect((form.get("mask") as File).name).toBe("m.png");
    const single = buildEditParts({ upstreamModel: "dall-e-2", prompt: "p", n: 1, images: [PNG] });
    expect(single.map((part) => part.name)).toEqual(["model", "prompt", "n", "image"]);
  });

  it("posts edits as multipart and reads the answer with usage", async () => {
    const { http, calls } = recordingClient(
      answer(200, {
        created: 1,
        data: [{ b64_json: PNG_BASE64 }],
        size: "1024x1024",
        quality: "high",
        background: "opaque",
        output_format: "png",
        usage: {
          input_tokens: 50,
          output_tokens: 4160,
          total_tokens: 4210,
          input_tokens_details: { text_tokens: 10, image_tokens: 40 },
        },
      }),
    );
    const model = new OpenAIImagesModel({ baseUrl: "http://up/v1", apiKey: "sk-x", http });
    const result = await model.doEdit({
      upstreamModel: "gpt-image-1",
      prompt: "p",
      n: 1,
      images: [PNG],
    });
    expect(calls[0]?.url).toBe("http://up/v1/images/edits");
    expect(calls[0]?.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(calls[0]?.body).toBeInstanceOf(Uint8Array);
    expect(result).toMatchObject({
      images: [{ b64Json: PNG_BASE64 }],
      size: "1024x1024",
      tokens: { inputTokens: 50, textTokens: 10, imageTokens: 40, outputTokens: 4160 },
      upstreamRequestId: "req_upstream",
    });
  });

  it("turns OpenAI errors into UpstreamErrors with the vendor's code", async () => {
    const { http } = recordingClient(
      answer(400, {
        error: {
          message: "blocked",
          type: "image_generation_user_error",
          code: "moderation_blocked",
        },
      }),
    );
    const model = new OpenAIImagesModel({ baseUrl: "http://up/v1", apiKey: "sk-x", http });
    const error = await model
      .doGenerate({ upstreamModel: "gpt-image-1", prompt: "p", n: 1 })
      .catch((e: unknown) => e);
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      status: 400,
      vendorCode: "moderation_blocked",
      message: "blocked",
    });
  });

  it("treats an answer without pictures as a protocol error; DALL·E links are kept", () => {
    expect(() => readImagesAnswer({ created: 1, data: [] })).toThrow(/without an image/);
    expect(readImagesAnswer({ created: 5, data: [{ url: "https://x/y.png" }] })).toEqual({
      images: [{ url: "https://x/y.png" }],
      created: 5,
    });
  });
});
