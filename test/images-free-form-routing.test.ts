/**
 * The spec's free-form sizes for `imgmodel` generations (multiples of 16, at most 3840 px a
 * side, ratio at most 3:1) against OpenAI's rule: gpt-image-1 and gpt-image-1.5 make only
 * 1024x1024, 1536x1024, 1024x1536 and auto, gpt-image-2 any valid size. The catalog's routes
 * send a free-form generation to the route's `free_form_upstream_model` (gpt-image-2) and a
 * listed size to its `upstream_model`; the sandbox refuses a free-form size on 1.x as OpenAI
 * does, so a gateway that sent one there would fail here.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface LoggedRequest {
  path: string;
  body: unknown;
}

describe("imgmodel free-form sizes go to a vendor model that makes them", () => {
  let gateway: TestGateway;
  let client: OpenAI;
  beforeAll(async () => {
    gateway = await startTestGateway();
    const { key } = await createUser(gateway, { balanceMicros: 100_000_000 });
    client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  /** The upstream model of the newest image generation the sandbox received. */
  async function lastUpstreamModel(): Promise<string | undefined> {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    const { requests } = (await response.json()) as { requests: LoggedRequest[] };
    const generations = requests.filter((entry) => entry.path.endsWith("/images/generations"));
    return (generations.at(-1)?.body as { model?: string } | undefined)?.model;
  }

  it.each([
    ["imgmodel-2", "1536x864", "gpt-image-2"],
    ["imgmodel-2", "1536x1024", "gpt-image-1.5"],
    ["imgmodel-2", "auto", "gpt-image-1.5"],
    ["imgmodel-1", "2048x1152", "gpt-image-2"],
    ["imgmodel-1", "1024x1024", "gpt-image-1"],
  ])("%s at %s is made by %s", async (model, size, upstream) => {
    const answer = await client.images.generate({
      model,
      prompt: "a lighthouse at dusk",
      size: size as "1024x1024",
    });
    expect(answer.data?.[0]?.b64_json).toBeTruthy();
    if (size !== "auto") expect((answer as { size?: string }).size).toBe(size);
    expect(await lastUpstreamModel()).toBe(upstream);
  });

  it("the sandbox refuses a free-form size on gpt-image-1.5 with OpenAI's error", async () => {
    const response = await fetch(`${gateway.sandboxUrl}/openai/v1/images/generations`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-sandbox" },
      body: JSON.stringify({ model: "gpt-image-1.5", prompt: "a lighthouse", size: "1536x864" }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { param: string; message: string } };
    expect(body.error.param).toBe("size");
    expect(body.error.message).toContain("1536x864");
  });
});
