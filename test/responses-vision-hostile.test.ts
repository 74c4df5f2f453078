/**
 * A model whose catalog entry says `vision: false` is sent no image through `/v1/responses`:
 * the check used to cover only `input[i].content` of the request itself, so images reaching
 * the model through the continued conversation (`previous_response_id`) or a
 * `function_call_output`'s `output` parts went upstream anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

async function post(key: string, json: unknown) {
  const response = await gateway.request("/v1/responses", { key, json });
  const body = (await response.json()) as {
    id?: string;
    error?: { code?: string; message?: string };
  };
  return { status: response.status, body };
}

describe("a model without vision (qwen-max)", () => {
  it("refuses an image in the request's own input (baseline, as documented)", async () => {
    const user = await createUser(gateway);
    const direct = await post(user.key, {
      model: "qwen-max",
      max_output_tokens: 16,
      input: [{ role: "user", content: [{ type: "input_image", image_url: PIXEL }] }],
    });
    expect(direct.status).toBe(400);
  });

  it("refuses an image that reaches it through previous_response_id", async () => {
    const user = await createUser(gateway);
    const seen = await post(user.key, {
      model: "gpt-4o-mini",
      max_output_tokens: 16,
      input: [{ role: "user", content: [{ type: "input_image", image_url: PIXEL }] }],
    });
    expect(seen.status).toBe(200);
    const chained = await post(user.key, {
      model: "qwen-max",
      max_output_tokens: 16,
      previous_response_id: seen.body.id,
      input: "And now?",
    });
    expect({ status: chained.status, code: chained.body.error?.code }).toEqual({
      status: 400,
      code: expect.any(String),
    });
  });

  it("refuses an image in a function_call_output's output", async () => {
    const user = await createUser(gateway);
    const result = await post(user.key, {
      model: "qwen-max",
      max_output_tokens: 16,
      tools: [{ type: "function", name: "shot", parameters: { type: "object", properties: {} } }],
      input: [
        { role: "user", content: "take a screenshot" },
        { type: "function_call", call_id: "call_1", name: "shot", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "call_1",
          output: [{ type: "input_image", image_url: PIXEL }],
        },
      ],
    });
    expect({ status: result.status, code: result.body.error?.code }).toEqual({
      status: 400,
      code: expect.any(String),
    });
  });
});
