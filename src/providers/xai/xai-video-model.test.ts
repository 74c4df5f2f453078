import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "../../../test/support/fake-vendor.ts";
import { UpstreamError, type VideoModel } from "../../spec/index.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { MODERATION_CODE } from "./read-xai-video.ts";
import { XaiVideoModel } from "./xai-video-model.ts";

let vendor: FakeVendor;
let http: HttpClient;
let model: XaiVideoModel;

beforeAll(async () => {
  vendor = await startFakeVendor();
  http = createHttpClient();
  model = new XaiVideoModel({ baseUrl: `${vendor.url}/v1`, apiKey: "xai-key", http });
});
afterAll(async () => {
  await http.close();
  await vendor.close();
});
beforeEach(() => {
  vendor.requests.length = 0;
});

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!UpstreamError.isInstance(error)) throw new Error(`expected an UpstreamError: ${error}`);
  return error;
}

const BODY = {
  prompt: "slow dolly-in, natural motion",
  image: { url: "https://a/start.jpg" },
  duration: 8,
  aspect_ratio: "16:9",
  resolution: "720p",
};
const POLL = { upstreamModel: "grok-imagine-video", providerTaskId: "req-1" };

describe("XaiVideoModel on the wire", () => {
  it("submits the body with the upstream model and Bearer auth, and reads request_id", async () => {
    vendor.answer({ headers: { "x-request-id": "hdr-1" }, body: { request_id: "req-1" } });
    const submission = await model.submit({
      upstreamModel: "grok-imagine-video-1.5-preview",
      body: BODY,
    });
    expect(submission).toEqual({
      providerTaskId: "req-1",
      providerRecord: { request_id: "req-1" },
      upstreamRequestId: "hdr-1",
    });
    const [sent] = vendor.requests;
    expect(sent).toMatchObject({ method: "POST", path: "/v1/videos/generations" });
    expect(sent?.headers).toMatchObject({
      authorization: "Bearer xai-key",
      "content-type": "application/json",
    });
    expect(sent?.headers).not.toHaveProperty("x-dashscope-async");
    expect(JSON.parse(sent?.body ?? "")).toEqual({
      model: "grok-imagine-video-1.5-preview",
      ...BODY,
    });
  });

  it("polls GET /videos/{request_id} and maps every status", async () => {
    const done = {
      status: "done",
      video: { url: "https://vidgen.x.ai/v.mp4", duration: 8, respect_moderation: true },
      model: "grok-imagine-video",
      usage: { cost_in_usd_ticks: 4_000_000_000 },
      progress: 100,
    };
    vendor.answer(
      { body: { status: "pending", model: "grok-imagine-video" } },
      { body: { status: "pending", progress: 45, model: "grok-imagine-video" } },
      { body: done },
      { body: { status: "failed", error: { code: "internal_error", message: "Render failed." } } },
      { body: { status: "expired" } },
    );
    expect(await model.poll(POLL)).toMatchObject({ status: "queued" });
    expect(await model.poll(POLL)).toMatchObject({ status: "running", progress: 45 });
    expect(await model.poll(POLL)).toEqual({
      status: "succeeded",
      providerRecord: done,
      videoUrl: "https://vidgen.x.ai/v.mp4",
      durationSeconds: 8,
      progress: 100,
      usage: { cost_in_usd_ticks: 4_000_000_000 },
    });
    expect(await model.poll(POLL)).toMatchObject({
      status: "failed",
      error: { code: "internal_error", message: "Render failed." },
    });
    expect(await model.poll(POLL)).toMatchObject({ status: "expired" });
    expect(vendor.requests).toHaveLength(5);
    for (const sent of vendor.requests) {
      expect(sent).toMatchObject({ method: "GET", path: "/v1/videos/req-1", body: "" });
      expect(sent.headers.authorization).toBe("Bearer xai-key");
    }
  });

  it("reads a done video withheld by moderation as failed", async () => {
    vendor.answer({
      body: {
        status: "done",
        video: { url: "", duration: 8, respect_moderation: false },
        model: "grok-imagine-video",
      },
    });
    expect(await model.poll(POLL)).toMatchObject({
      status: "failed",
      error: { code: MODERATION_CODE },
    });
  });

  it("has no cancel (xAI offers none)", () => {
    const video: VideoModel = model;
    expect(video.cancel).toBeUndefined();
  });
});

describe("XaiVideoModel errors", () => {
  it("keeps a 429's status, code and Retry-After, and calls it retryable", async () => {
    vendor.answer({
      status: 429,
      headers: { "retry-after": "30", "x-request-id": "rl-1" },
      body: { code: "resource_exhausted", error: "Too many requests." },
    });
    expect(await failure(model.poll(POLL))).toMatchObject({
      kind: "http",
      status: 429,
      vendorCode: "resource_exhausted",
      message: "Too many requests.",
      retryAfterSeconds: 30,
      upstreamRequestId: "rl-1",
      retryable: true,
    });
  });

  it("passes a 400's text through, in either error shape", async () => {
    vendor.answer(
      {
        status: 400,
        body: {
          error: { message: "duration must be between 1 and 15", code: "invalid_argument" },
        },
      },
      { status: 400, body: { code: "invalid_argument", error: "image must be an object" } },
    );
    expect(
      await failure(model.submit({ upstreamModel: "grok-imagine-video", body: BODY })),
    ).toMatchObject({
      status: 400,
      vendorCode: "invalid_argument",
      message: "duration must be between 1 and 15",
      retryable: false,
    });
    expect(
      await failure(model.submit({ upstreamModel: "grok-imagine-video", body: BODY })),
    ).toMatchObject({
      status: 400,
      vendorCode: "invalid_argument",
      message: "image must be an object",
    });
  });

  it("answers a 2xx body that is not JSON, or has no request_id, with a protocol error", async () => {
    vendor.answer(
      { body: "<html>busy</html>" },
      { body: "not json" },
      { body: { id: "elsewhere" } },
    );
    expect(await failure(model.poll(POLL))).toMatchObject({ kind: "protocol", retryable: false });
    expect(
      await failure(model.submit({ upstreamModel: "grok-imagine-video", body: BODY })),
    ).toMatchObject({ kind: "protocol" });
    const missing = await failure(
      model.submit({ upstreamModel: "grok-imagine-video", body: BODY }),
    );
    expect(missing).toMatchObject({ kind: "protocol" });
    expect(missing.message).toMatch(/request_id/);
  });
});
