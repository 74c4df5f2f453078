import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseImageRequest, statusForCode } from "./dashscope-image.ts";
import { buildSandboxApp } from "./server.ts";

const PATH = "/dashscope/api/v1/services/aigc/multimodal-generation/generation";

function body(model: string, content: Record<string, string>[], parameters?: object) {
  return {
    model,
    input: { messages: [{ role: "user", content }] },
    ...(parameters ? { parameters } : {}),
  };
}

describe("sandbox Qwen-Image", () => {
  let app: FastifyInstance;
  beforeAll(() => {
    app = buildSandboxApp();
  });
  afterAll(() => app.close());

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: "POST",
      url: PATH,
      headers: { authorization: "Bearer sk-sandbox", ...headers },
      payload: payload as Record<string, unknown>,
    });

  it("validates like the vendor", () => {
    expect(parseImageRequest("qwen-image-2.0", body("", [{ text: "x" }]))).toMatchObject({
      width: 1024,
      height: 1024,
      n: 1,
    });
    expect(parseImageRequest("qwen-image-max", body("", [{ text: "x" }]))).toMatchObject({
      width: 1328,
      height: 1328,
    });
    expect(() => parseImageRequest("qwen-image-edit", body("", [{ text: "x" }]))).toThrow(
      /1 to 3 images/,
    );
    expect(() => parseImageRequest("qwen-image", body("", [{ text: "x" }], { n: 2 }))).toThrow(
      /between 1 and 1/,
    );
    expect(() =>
      parseImageRequest("qwen-image", body("", [{ text: "x" }], { size: "1024x1024" })),
    ).toThrow(/size/);
    expect(() =>
      parseImageRequest("qwen-image-edit", body("", [{ image: "ftp://x" }, { text: "x" }])),
    ).toThrow(/url error/);
    expect(statusForCode("Throttling.RateQuota")).toBe(429);
    expect(statusForCode("DataInspectionFailed")).toBe(400);
  });

  it("answers the native shape with signed 24-hour links", async () => {
    const response = await post(
      body("qwen-image-plus", [{ text: "a boat" }], { size: "928*1664" }),
    );
    expect(response.statusCode).toBe(200);
    const json = response.json() as {
      output: { choices: { message: { content: { image: string }[] } }[] };
      usage: unknown;
      request_id: string;
    };
    expect(json.usage).toEqual({ width: 928, height: 1664, image_count: 1 });
    const link = new URL(json.output.choices[0]?.message.content[0]?.image ?? "");
    expect(link.pathname).toMatch(/^\/__results\/img-928x1664-[0-9a-f]{8}-o\.png$/);
    const download = await app.inject({ method: "GET", url: `${link.pathname}${link.search}` });
    expect(download.statusCode).toBe(200);
    expect(download.headers["content-type"]).toBe("image/png");
    const withKey = await app.inject({
      method: "GET",
      url: `${link.pathname}${link.search}`,
      headers: { authorization: "Bearer sk" },
    });
    expect(withKey.statusCode).toBe(400);
  });

  it("injects vendor error codes and honours no-usage", async () => {
    const blocked = await post(body("qwen-image", [{ text: "x" }]), {
      "x-sandbox-fault": "code=DataInspectionFailed",
    });
    expect(blocked.statusCode).toBe(400);
    expect(blocked.json()).toMatchObject({ code: "DataInspectionFailed" });
    const throttled = await post(body("qwen-image", [{ text: "x" }]), {
      "x-sandbox-fault": "code=Throttling.RateQuota;retry-after=2",
    });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers["retry-after"]).toBe("2");
    const quiet = await post(body("qwen-image", [{ text: "x [[sandbox:no-usage]]" }]));
    expect(quiet.json()).not.toHaveProperty("usage");
  });
});
