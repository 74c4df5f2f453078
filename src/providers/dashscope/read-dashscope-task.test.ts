import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { readDashScopeDuration, readDashScopeTask } from "./read-dashscope-task.ts";

const TIMES = {
  submit_time: "2025-07-27 21:05:15.212",
  scheduled_time: "2025-07-27 21:05:15.250",
  end_time: "2025-07-27 21:07:01.003",
};

function thrown(read: () => unknown): UpstreamError {
  try {
    read();
  } catch (error) {
    if (UpstreamError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

describe("readDashScopeDuration", () => {
  it("reads duration first, then video_duration, then output_video_duration", () => {
    expect(
      readDashScopeDuration({ duration: 12, video_duration: 5, output_video_duration: 10 }),
    ).toBe(12);
    expect(readDashScopeDuration({ video_duration: 5, output_video_duration: 10 })).toBe(5);
    expect(readDashScopeDuration({ output_video_duration: 10 })).toBe(10);
  });

  it("passes over fields that hold no positive number", () => {
    expect(
      readDashScopeDuration({ duration: 0, video_duration: "5", output_video_duration: 7 }),
    ).toBe(7);
    expect(readDashScopeDuration({ video_count: 1 })).toBeUndefined();
    expect(readDashScopeDuration(undefined)).toBeUndefined();
  });
});

describe("readDashScopeTask", () => {
  it("reads PENDING and RUNNING as queued and running, keeping the record", () => {
    const pending = {
      request_id: "r1",
      output: { task_id: "t", task_status: "PENDING", ...TIMES },
    };
    expect(readDashScopeTask(pending)).toEqual({ status: "queued", providerRecord: pending });
    const running = { request_id: "r2", output: { task_id: "t", task_status: "RUNNING" } };
    expect(readDashScopeTask(running)).toEqual({ status: "running", providerRecord: running });
  });

  it("reads a Wan 2.6 success: link, billed seconds from duration, seed, usage", () => {
    const usage = {
      duration: 10,
      input_video_duration: 0,
      output_video_duration: 10,
      video_count: 1,
      SR: 720,
      ratio: "16:9",
    };
    const body = {
      request_id: "r3",
      output: {
        task_id: "t",
        task_status: "SUCCEEDED",
        ...TIMES,
        video_url: "http://dashscope-result-sh.oss/x.mp4?Expires=1",
        orig_prompt: "a fox",
        seed: 42,
      },
      usage,
    };
    expect(readDashScopeTask(body)).toEqual({
      status: "succeeded",
      providerRecord: body,
      videoUrl: "http://dashscope-result-sh.oss/x.mp4?Expires=1",
      durationSeconds: 10,
      seed: 42,
      usage,
    });
  });

  it("reads a Wan 2.5 success (video_duration) with the seed in the parameters echo", () => {
    const body = {
      output: { task_id: "t", task_status: "SUCCEEDED", video_url: "http://oss/y.mp4" },
      parameters: { seed: 7 },
      usage: { video_duration: 5, video_count: 1, SR: 1080 },
    };
    expect(readDashScopeTask(body)).toMatchObject({
      status: "succeeded",
      durationSeconds: 5,
      seed: 7,
    });
    const noSeed = {
      output: { task_id: "t", task_status: "SUCCEEDED", video_url: "http://oss/z" },
    };
    const state = readDashScopeTask(noSeed);
    expect(state).not.toHaveProperty("seed");
    expect(state).not.toHaveProperty("durationSeconds");
  });

  it("reads FAILED's code and message (reported at HTTP 200)", () => {
    const body = {
      request_id: "r4",
      output: {
        task_id: "t",
        task_status: "FAILED",
        code: "InvalidParameter",
        message: "Field required: input.media",
      },
    };
    expect(readDashScopeTask(body)).toEqual({
      status: "failed",
      providerRecord: body,
      error: { code: "InvalidParameter", message: "Field required: input.media" },
    });
    expect(
      readDashScopeTask({ output: { task_status: "FAILED", code: "InternalError" } }).error,
    ).toEqual({ code: "InternalError", message: "InternalError" });
    expect(readDashScopeTask({ output: { task_status: "FAILED" } }).error).toEqual({
      code: "unknown",
      message: "DashScope reported the task FAILED without a code or message.",
    });
  });

  it("reads CANCELED as canceled and UNKNOWN as expired", () => {
    expect(readDashScopeTask({ output: { task_id: "t", task_status: "CANCELED" } })).toMatchObject({
      status: "canceled",
    });
    const unknown = readDashScopeTask({ output: { task_id: "t", task_status: "UNKNOWN" } });
    expect(unknown).toMatchObject({ status: "expired" });
    expect(unknown).not.toHaveProperty("error");
    expect(
      readDashScopeTask({
        output: { task_status: "UNKNOWN", code: "InvalidParameter", message: "task expired" },
      }).error,
    ).toEqual({ code: "InvalidParameter", message: "task expired" });
  });

  it("refuses a success without a link and statuses outside the protocol", () => {
    const noLink = thrown(() =>
      readDashScopeTask({ request_id: "r5", output: { task_status: "SUCCEEDED" } }),
    );
    expect(noLink).toMatchObject({ kind: "protocol", retryable: false, upstreamRequestId: "r5" });
    expect(noLink.message).toMatch(/without output\.video_url/);
    const odd = thrown(() => readDashScopeTask({ output: { task_status: "SUSPENDED" } }));
    expect(odd).toMatchObject({ kind: "protocol" });
    expect(odd.message).toContain('"SUSPENDED"');
    expect(thrown(() => readDashScopeTask({}))).toMatchObject({ kind: "protocol" });
  });

  it.each([
    ["a link to the cloud metadata address", "http://169.254.169.254/latest/v.mp4"],
    ["a link-local IPv6 link", "http://[fe80::1]/v.mp4"],
    ["a result that is not a web link", "file:///etc/passwd"],
  ])("fails a success with %s (invalid_result_link)", (_, videoUrl) => {
    const state = readDashScopeTask({
      request_id: "r7",
      output: { task_id: "t", task_status: "SUCCEEDED", video_url: videoUrl },
      usage: { duration: 5 },
    });
    expect(state.status).toBe("failed");
    expect(state.videoUrl).toBeUndefined();
    expect(state.error?.code).toBe("invalid_result_link");
  });

  it("hands on loopback and private-network links (the sandbox, an operator's own vendor)", () => {
    for (const videoUrl of ["http://127.0.0.1:8090/v.mp4", "http://10.0.0.5/v.mp4"]) {
      const state = readDashScopeTask({
        output: { task_id: "t", task_status: "SUCCEEDED", video_url: videoUrl },
      });
      expect(state).toMatchObject({ status: "succeeded", videoUrl });
    }
  });

  it("reads an error envelope answered with 200 as DashScope's error", () => {
    const error = thrown(() =>
      readDashScopeTask({ request_id: "r6", code: "Throttling.RateQuota", message: "slow down" }),
    );
    expect(error).toMatchObject({
      kind: "http",
      status: 429,
      vendorCode: "Throttling.RateQuota",
      message: "slow down",
      upstreamRequestId: "r6",
      retryable: true,
    });
  });
});
