import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import type { HttpClient, UpstreamResponse } from "../kit/http-client.ts";
import {
  buildImageRequest,
  DashScopeImageModel,
  readImageAnswer,
} from "./dashscope-image-model.ts";

function answer(status: number, body: unknown): UpstreamResponse {
  const text = JSON.stringify(body);
  return {
    status,
    headers: {},
    body: Object.assign((async function* () {})(), {
      text: async () => text,
      json: async () => JSON.parse(text) as unknown,
      destroy: () => {},
    }),
  };
}

function client(response: UpstreamResponse): { http: HttpClient; sent: unknown[] } {
  const sent: unknown[] = [];
  const http: HttpClient = {
    post: async (_url, init) => {
      sent.push(JSON.parse(String(init.body)));
      return response;
    },
    get: async () => response,
    download: () => Promise.reject(new Error("no downloads here")),
    withTimeouts: () => http,
    close: async () => {},
  };
  return { http, sent };
}

describe("DashScope Qwen-Image adapter", () => {
  it("writes one user message (images, then the prompt) and W*H sizes", () => {
    expect(
      buildImageRequest({
        upstreamModel: "qwen-image-edit-plus",
        prompt: "purple sky",
        referenceUrls: ["https://a/1.png", "https://a/2.png"],
        n: 1,
        size: { width: 1328, height: 1328 },
        seed: 3,
        watermark: false,
        negativePrompt: "blur",
        promptExtend: true,
      }),
    ).toEqual({
      model: "qwen-image-edit-plus",
      input: {
        messages: [
          {
            role: "user",
            content: [
              { image: "https://a/1.png" },
              { image: "https://a/2.png" },
              { text: "purple sky" },
            ],
          },
        ],
      },
      parameters: {
        size: "1328*1328",
        n: 1,
        seed: 3,
        watermark: false,
        negative_prompt: "blur",
        prompt_extend: true,
      },
    });
  });

  it("reads the links, the size and the request id", async () => {
    const { http, sent } = client(
      answer(200, {
        output: {
          choices: [
            {
              finish_reason: "stop",
              message: { role: "assistant", content: [{ image: "https://oss/x.png?Expires=1" }] },
            },
          ],
        },
        usage: { width: 1664, height: 928, image_count: 1 },
        request_id: "ds-1",
      }),
    );
    const model = new DashScopeImageModel({ baseUrl: "http://ds/api/v1", apiKey: "sk", http });
    const result = await model.doGenerate({ upstreamModel: "qwen-image", prompt: "p", n: 1 });
    expect(sent).toHaveLength(1);
    expect(result).toEqual({
      images: [{ url: "https://oss/x.png?Expires=1" }],
      width: 1664,
      height: 928,
      upstreamRequestId: "ds-1",
      warnings: [],
    });
  });

  it("keeps DashScope's code on errors, in the status or in a 200 body", async () => {
    const { http } = client(
      answer(400, {
        request_id: "r",
        code: "DataInspectionFailed",
        message: "Input data may contain inappropriate content.",
      }),
    );
    const model = new DashScopeImageModel({ baseUrl: "http://ds", apiKey: "sk", http });
    const error = await model
      .doGenerate({ upstreamModel: "qwen-image", prompt: "p", n: 1 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      vendorCode: "DataInspectionFailed",
      upstreamRequestId: "r",
    });
    expect(() => readImageAnswer({ code: "Throttling.RateQuota", message: "slow down" })).toThrow(
      UpstreamError,
    );
    expect(() => readImageAnswer({ output: { choices: [] } })).toThrow(/without an image/);
  });
});
