import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { MODERATION_CODE, readXaiVideo } from "./read-xai-video.ts";

function thrown(read: () => unknown): UpstreamError {
  try {
    read();
  } catch (error) {
    if (UpstreamError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

describe("readXaiVideo", () => {
  it("reads pending as queued until there is progress, then running", () => {
    const waiting = { status: "pending", model: "grok-imagine-video" };
    expect(readXaiVideo(waiting)).toEqual({ status: "queued", providerRecord: waiting });
    expect(readXaiVideo({ status: "pending", progress: 0 })).toMatchObject({
      status: "queued",
      progress: 0,
    });
    const moving = { status: "pending", progress: 45, model: "grok-imagine-video" };
    expect(readXaiVideo(moving)).toEqual({
      status: "running",
      progress: 45,
      providerRecord: moving,
    });
    expect(readXaiVideo({ status: "pending", progress: 140 })).toMatchObject({ progress: 100 });
  });

  it("reads done as succeeded with the link, the seconds and the usage", () => {
    const body = {
      status: "done",
      video: { url: "https://vidgen.x.ai/v.mp4", duration: 6, respect_moderation: true },
      model: "grok-imagine-video",
      usage: { cost_in_usd_ticks: 500_000_000 },
      progress: 100,
    };
    expect(readXaiVideo(body)).toEqual({
      status: "succeeded",
      providerRecord: body,
      videoUrl: "https://vidgen.x.ai/v.mp4",
      durationSeconds: 6,
      progress: 100,
      usage: { cost_in_usd_ticks: 500_000_000 },
    });
  });

  it("reads a done video withheld by moderation as failed", () => {
    for (const video of [
      { respect_moderation: false },
      { url: "", respect_moderation: false, duration: 6 },
    ]) {
      expect(readXaiVideo({ status: "done", video })).toMatchObject({
        status: "failed",
        error: { code: MODERATION_CODE, message: expect.stringContaining("moderation") },
      });
    }
    const kept = readXaiVideo({
      status: "done",
      video: { url: "https://vidgen.x.ai/w.mp4", respect_moderation: false },
    });
    expect(kept).toMatchObject({ status: "succeeded", videoUrl: "https://vidgen.x.ai/w.mp4" });
  });

  it("reads failed with xAI's error, in either shape", () => {
    expect(
      readXaiVideo({
        status: "failed",
        error: { code: "internal_error", message: "Generation failed." },
      }),
    ).toMatchObject({
      status: "failed",
      error: { code: "internal_error", message: "Generation failed." },
    });
    expect(
      readXaiVideo({ status: "failed", code: "invalid_argument", error: "Bad image." }),
    ).toMatchObject({ error: { code: "invalid_argument", message: "Bad image." } });
    expect(readXaiVideo({ status: "failed" })).toMatchObject({
      status: "failed",
      error: { code: "unknown" },
    });
  });

  it("reads expired", () => {
    const state = readXaiVideo({ status: "expired" });
    expect(state).toEqual({ status: "expired", providerRecord: { status: "expired" } });
  });

  it("refuses done without any video and statuses outside the protocol", () => {
    expect(thrown(() => readXaiVideo({ status: "done", video: {} }))).toMatchObject({
      kind: "protocol",
      retryable: false,
    });
    expect(thrown(() => readXaiVideo({ status: "done" }))).toMatchObject({ kind: "protocol" });
    const odd = thrown(() => readXaiVideo({ status: "processing" }));
    expect(odd.message).toContain('"processing"');
    expect(thrown(() => readXaiVideo({}))).toMatchObject({ kind: "protocol" });
  });
});
