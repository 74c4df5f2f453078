/**
 * The running gateway against rules of the API contract (gateway-api-spec.md) no other test
 * pins at their boundary: family B's prompt (optional with an image), its first frame (an https
 * URL), its duration (whole seconds, docs/videos.md), and the `imgmodel` free-form size limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";

describe("spec conformance at the boundaries", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await createUser(gateway, { balanceMicros: 1_000_000_000 }));
  });
  afterAll(() => gateway.close());

  const submitVideo = (body: Record<string, unknown>) =>
    gateway.request("/v1/videos/generations", { key, json: body });
  const IMAGE = { url: "https://example.com/first-frame.png" };

  // Spec 2.6: prompt "Required for text to video; for image to video it is optional".
  it("2.6: gen-video image to video without a prompt is accepted (prompt optional with an image)", async () => {
    const response = await submitVideo({ model: "gen-video", image: IMAGE });
    const body = await response.text();
    expect(response.status, body).toBe(202);
  });

  it("2.6: gen-video-1.5-preview (image to video only) without a prompt is accepted", async () => {
    const response = await submitVideo({ model: "gen-video-1.5-preview", image: IMAGE });
    const body = await response.text();
    expect(response.status, body).toBe(202);
  });

  // Spec 2.6: image "First-frame reference {url: <https URL>}".
  it("2.6: gen-video image.url that is not https (http://) is refused with 400", async () => {
    const response = await submitVideo({
      model: "gen-video",
      prompt: "the wind picks up",
      image: { url: "http://example.com/first-frame.png" },
    });
    const body = await response.text();
    expect(response.status, body).toBe(400);
  });

  it("2.6: a first frame that is not https or an inline image is refused before anything is held", async () => {
    const before = await balanceOf(gateway, key);
    for (const url of [
      "http://example.com/f.png",
      "ftp://example.com/f.png",
      "file:///etc/passwd",
    ]) {
      const response = await submitVideo({ model: "gen-video", prompt: "waves", image: { url } });
      expect(response.status, url).toBe(400);
      const body = (await response.json()) as { error: { param?: string } };
      expect(body.error.param).toBe("image.url");
    }
    expect(await balanceOf(gateway, key)).toBe(before);
    const inline = await submitVideo({
      model: "gen-video",
      image: { url: "data:image/png;base64,iVBORw0KGgo=" },
    });
    expect(inline.status, await inline.clone().text()).toBe(202);
  });

  // Spec 2.6 types duration `number`; xAI makes whole seconds (docs/videos.md).
  it("2.6: a fractional gen-video duration is refused naming it, a whole one taken", async () => {
    const fractional = await submitVideo({ model: "gen-video", prompt: "waves", duration: 5.5 });
    expect(fractional.status).toBe(400);
    expect(((await fractional.json()) as { error: { param?: string } }).error.param).toBe(
      "duration",
    );
    expect((await submitVideo({ model: "gen-video", prompt: "waves", duration: 6 })).status).toBe(
      202,
    );
  });

  it("4.3/8: imgmodel free-form size one step past 3840 px (3856x1296, multiples of 16, ratio < 3) is refused", async () => {
    const response = await gateway.request("/v1/images/generations", {
      key,
      json: { model: "imgmodel-2", prompt: "x", size: "3856x1296", quality: "low" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "unsupported_size", param: "size" },
    });
  });

  it("2.6/7: gen-video refusals before the vendor are gateway style (image as a string)", async () => {
    const response = await submitVideo({
      model: "gen-video",
      prompt: "x",
      image: "https://example.com/first-frame.png",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "invalid_parameter", param: "image" },
    });
  });
});
