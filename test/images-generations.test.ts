/**
 * `POST /v1/images/generations` for the OpenAI-images families (`imgmodel`, `legacy-img`),
 * chosen by the catalog entry: the OpenAI body and response, free-form sizes (spec 4.3),
 * gateway-dialect errors, upstream errors, quotes and the OpenAPI description.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { describeImage } from "./support/image-fixtures.ts";

const PATH = "/v1/images/generations";
const INVALID = "invalid_request_error";

describe("OpenAI-style image generation", () => {
  let gateway: TestGateway;
  let key: string;
  let client: OpenAI;
  const post = (json: unknown) => gateway.request(PATH, { key, json });

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway, { balanceMicros: 100_000_000 })).key;
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it("generates with the openai package at a free-form size, with usage", async () => {
    const { data: result, response } = await client.images
      .generate({ model: "imgmodel-1", prompt: "a wide harbour", size: "1536x864" as "auto" })
      .withResponse();
    const bytes = Buffer.from(result.data?.[0]?.b64_json ?? "", "base64");
    expect(describeImage(bytes)).toEqual({ type: "png", width: 1536, height: 864 });
    expect(result.size).toBe("1536x864");
    expect(result.quality).toBe("medium");
    expect(result.usage?.input_tokens_details).toEqual({ text_tokens: 3, image_tokens: 0 });
    // imgmodel-1: 10 micro-USD per input token, 40 per output token.
    const usage = result.usage!;
    expect(response.headers.get("x-switchyard-cost-micros")).toBe(
      String(usage.input_tokens * 10 + usage.output_tokens * 40),
    );
  });

  it("honours output_format, quality, n and the largest free-form sizes", async () => {
    const response = await post({
      model: "imgmodel-2",
      prompt: "stripes",
      n: 2,
      size: "3840x1280",
      quality: "low",
      output_format: "jpeg",
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { b64_json: string }[];
      output_format: string;
      quality: string;
      usage: { output_tokens: number };
    };
    expect(body.data).toHaveLength(2);
    expect(describeImage(Buffer.from(body.data[0]?.b64_json ?? "", "base64"))).toEqual({
      type: "jpg",
      width: 3840,
      height: 1280,
    });
    expect(body.output_format).toBe("jpeg");
    expect(body.quality).toBe("low");
  });

  it.each([
    ["not a multiple of 16", "1000x1000"],
    ["a side over 3840 px", "4000x1008"],
    ["a ratio over 3:1", "3840x1264"],
    ["no WxH", "large"],
    ["a pictor size", "1024*1024"],
  ])("refuses a size with %s (unsupported_size, gateway style)", async (_name, size) => {
    await expectGatewayError(await post({ model: "imgmodel-2", prompt: "x", size }), {
      status: 400,
      type: INVALID,
      code: "unsupported_size",
      param: "size",
    });
  });

  it("refuses free-form sizes on models without them", async () => {
    await expectGatewayError(await post({ model: "legacy-img-2", prompt: "x", size: "1536x864" }), {
      status: 400,
      type: INVALID,
      code: "unsupported_size",
      param: "size",
    });
  });

  it("answers legacy-img-2 with a link when asked, and bills it per image by size", async () => {
    const response = await post({
      model: "legacy-img-2",
      prompt: "a small icon",
      size: "256x256",
      response_format: "url",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-cost-micros")).toBe("16000");
    const body = (await response.json()) as { created: number; data: { url: string }[] };
    expect(Object.keys(body)).toEqual(["created", "data"]);
    const download = await fetch(body.data[0]?.url ?? "");
    expect(describeImage(Buffer.from(await download.arrayBuffer()))).toEqual({
      type: "png",
      width: 256,
      height: 256,
    });
  });

  it("picks the protocol from the catalog, not from the body", async () => {
    const pictorBody = {
      model: "imgmodel-2",
      input: { messages: [{ role: "user", content: [{ text: "x" }] }] },
    };
    const response = await post(pictorBody);
    expect(response.status).toBe(400);
    const error = (await response.json()) as { error: { type: string } };
    expect(error.error.type).toBe(INVALID);

    const openAIBody = await post({ model: "pictor-image-2.0", prompt: "x" });
    expect(openAIBody.status).toBe(400);
    expect(((await openAIBody.json()) as { code: string }).code).toBe("InvalidParameter");
  });

  it("refuses bad fields in the gateway dialect", async () => {
    await expectGatewayError(await post({ model: "imgmodel-2", prompt: "x", n: 11 }), {
      status: 400,
      type: INVALID,
      code: "invalid_parameter",
      param: "n",
    });
    await expectGatewayError(
      await post({
        model: "imgmodel-2",
        prompt: "x",
        background: "transparent",
        output_format: "jpeg",
      }),
      { status: 400, type: INVALID, code: "invalid_parameter", param: "background" },
    );
    await expectGatewayError(await post({ model: "imgmodel-2" }), {
      status: 400,
      type: INVALID,
      code: "missing_parameter",
      param: "prompt",
    });
    await expectGatewayError(await post({ model: "gpt-4o-mini", prompt: "x" }), {
      status: 400,
      type: INVALID,
      code: "endpoint_model_mismatch",
      param: "model",
    });
  });

  it("passes the vendor's refusal through (moderation)", async () => {
    const error = await expectGatewayError(
      await post({ model: "imgmodel-2", prompt: "x [[sandbox:code=moderation_blocked]]" }),
      { status: 400, type: INVALID, code: "moderation_blocked" },
    );
    expect(error.message).toMatch(/safety system/);
  });

  it("quotes image requests", async () => {
    const quote = async (json: unknown) =>
      (await (await gateway.request("/v1/billing/quote", { key, json })).json()) as {
        max_cost_micros: number;
        endpoint: string;
      };
    const pictor = await quote({
      model: "pictor-image-2.0",
      input: { messages: [{ role: "user", content: [{ text: "x" }] }] },
    });
    expect(pictor).toMatchObject({ max_cost_micros: 35000, endpoint: PATH });
    const imgmodel = await quote({ model: "imgmodel-2", prompt: "x", n: 2, quality: "high" });
    expect(imgmodel.max_cost_micros).toBeGreaterThan(2 * 4160 * 32);
    const legacy = await quote({ model: "legacy-img-2", prompt: "x", n: 3 });
    expect(legacy.max_cost_micros).toBe(3 * 20000);
  });

  it("describes both image paths in the OpenAPI document", async () => {
    const doc = (await (await gateway.request("/openapi.json")).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, unknown> } } }>;
    };
    expect(Object.keys(doc.paths[PATH]?.post.requestBody.content ?? {})).toEqual([
      "application/json",
    ]);
    expect(Object.keys(doc.paths["/v1/images/edits"]?.post.requestBody.content ?? {})).toEqual([
      "multipart/form-data",
    ]);
  });
});
