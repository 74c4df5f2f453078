import { describe, expect, it } from "vitest";
import { videoRequestBody } from "./video-request.ts";

describe("videoRequestBody", () => {
  it("puts the upstream model first and keeps the rest as given", () => {
    const body = videoRequestBody({
      upstreamModel: "wan2.6-t2v",
      body: { input: { prompt: "a fox" }, parameters: { duration: 5 } },
    });
    expect(body).toEqual({
      model: "wan2.6-t2v",
      input: { prompt: "a fox" },
      parameters: { duration: 5 },
    });
    expect(Object.keys(body)[0]).toBe("model");
  });

  it("replaces a model inside the given body", () => {
    expect(
      videoRequestBody({ upstreamModel: "grok-imagine-video", body: { model: "gen-video", a: 1 } }),
    ).toEqual({ model: "grok-imagine-video", a: 1 });
  });
});
