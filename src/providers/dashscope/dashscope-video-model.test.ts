import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "../../../test/support/fake-vendor.ts";
import { UpstreamError } from "../../spec/index.ts";
import { createHttpClient, type HttpClient } from "../kit/http-client.ts";
import { DashScopeVideoModel } from "./dashscope-video-model.ts";

let vendor: FakeVendor;
let http: HttpClient;
let model: DashScopeVideoModel;

beforeAll(async () => {
  vendor = await startFakeVendor();
  http = createHttpClient();
  model = new DashScopeVideoModel({ baseUrl: `${vendor.url}/api/v1`, apiKey: "sk-ds", http });
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
  input: { prompt: "a red fox in snow", media: [{ type: "first_frame", url: "https://a/f.png" }] },
  parameters: { resolution: "720P", duration: 10, prompt_extend: true, watermark: false },
};
const POLL = { upstreamModel: "wan2.7-i2v", providerTaskId: "b3be072e-1" };

describe("DashScopeVideoModel on the wire", () => {
  it("submits with X-DashScope-Async, Bearer auth and the model set, and reads task_id", async () => {
    const accepted = {
      output: { task_id: "b3be072e-1", task_status: "PENDING" },
      request_id: "8a931b13",
    };
    vendor.answer({ body: accepted });
    const submission = await model.submit({
      upstreamModel: "wan2.7-i2v",
      body: { ...BODY, model: "motion2.7-i2v" },
    });
    expect(submission).toEqual({
      providerTaskId: "b3be072e-1",
      providerRecord: accepted,
      upstreamRequestId: "8a931b13",
    });
    const [sent] = vendor.requests;
    expect(sent).toMatchObject({
      method: "POST",
      path: "/api/v1/services/aigc/video-generation/video-synthesis",
    });
    expect(sent?.headers).toMatchObject({
      authorization: "Bearer sk-ds",
      "content-type": "application/json",
      "x-dashscope-async": "enable",
    });
    expect(JSON.parse(sent?.body ?? "")).toEqual({ model: "wan2.7-i2v", ...BODY });
  });

  it("polls GET /tasks/{id} with only the Authorization header", async () => {
    vendor.answer({
      body: { request_id: "p", output: { task_id: "b3be072e-1", task_status: "PENDING" } },
    });
    expect(await model.poll(POLL)).toMatchObject({ status: "queued" });
    const [sent] = vendor.requests;
    expect(sent).toMatchObject({ method: "GET", path: "/api/v1/tasks/b3be072e-1", body: "" });
    expect(sent?.headers.authorization).toBe("Bearer sk-ds");
    expect(sent?.headers).not.toHaveProperty("x-dashscope-async");
    expect(sent?.headers).not.toHaveProperty("content-type");
  });

  it("maps every task status read from the wire", async () => {
    const succeeded = {
      request_id: "s",
      output: {
        task_id: "b3be072e-1",
        task_status: "SUCCEEDED",
        video_url: "http://dashscope-result-bj.oss-cn-beijing.aliyuncs.com/v.mp4?Expires=1",
        seed: 1234,
      },
      usage: { duration: 10, input_video_duration: 0, output_video_duration: 10, video_count: 1 },
    };
    vendor.answer(
      { body: { output: { task_id: "b3be072e-1", task_status: "RUNNING" } } },
      { body: succeeded },
      {
        body: {
          output: {
            task_id: "b3be072e-1",
            task_status: "FAILED",
            code: "DataInspectionFailed",
            message: "Output data may contain inappropriate content.",
          },
        },
      },
      { body: { output: { task_id: "b3be072e-1", task_status: "CANCELED" } } },
      { body: { output: { task_id: "b3be072e-1", task_status: "UNKNOWN" } } },
    );
    expect(await model.poll(POLL)).toMatchObject({ status: "running" });
    expect(await model.poll(POLL)).toEqual({
      status: "succeeded",
      providerRecord: succeeded,
      videoUrl: "http://dashscope-result-bj.oss-cn-beijing.aliyuncs.com/v.mp4?Expires=1",
      durationSeconds: 10,
      seed: 1234,
      usage: succeeded.usage,
    });
    expect(await model.poll(POLL)).toMatchObject({
      status: "failed",
      error: {
        code: "DataInspectionFailed",
        message: "Output data may contain inappropriate content.",
      },
    });
    expect(await model.poll(POLL)).toMatchObject({ status: "canceled" });
    expect(await model.poll(POLL)).toMatchObject({ status: "expired" });
    expect(vendor.requests).toHaveLength(5);
  });

  it("cancels with POST /tasks/{id}/cancel and no body", async () => {
    vendor.answer({ body: { request_id: "c" } });
    await model.cancel(POLL);
    const [sent] = vendor.requests;
    expect(sent).toMatchObject({
      method: "POST",
      path: "/api/v1/tasks/b3be072e-1/cancel",
      body: "",
    });
    expect(sent?.headers.authorization).toBe("Bearer sk-ds");
    expect(sent?.headers).not.toHaveProperty("x-dashscope-async");
  });

  it("reads a refused cancel (the task is no longer PENDING) as DashScope's error", async () => {
    vendor.answer({
      status: 400,
      body: { request_id: "c2", code: "UnsupportedOperation", message: "Task is not PENDING." },
    });
    expect(await failure(model.cancel(POLL))).toMatchObject({
      status: 400,
      vendorCode: "UnsupportedOperation",
      message: "Task is not PENDING.",
      retryable: false,
    });
    vendor.answer({
      body: { request_id: "c3", code: "UnsupportedOperation", message: "Not now." },
    });
    expect(await failure(model.cancel(POLL))).toMatchObject({
      vendorCode: "UnsupportedOperation",
      message: "Not now.",
      upstreamRequestId: "c3",
    });
  });
});

describe("DashScopeVideoModel errors", () => {
  it("keeps a 429's status, code and Retry-After, and calls it retryable", async () => {
    vendor.answer({
      status: 429,
      headers: { "retry-after": "17" },
      body: {
        request_id: "q",
        code: "Throttling.RateQuota",
        message: "Requests rate limit exceeded, please try again later.",
      },
    });
    expect(await failure(model.poll(POLL))).toMatchObject({
      kind: "http",
      status: 429,
      vendorCode: "Throttling.RateQuota",
      message: "Requests rate limit exceeded, please try again later.",
      retryAfterSeconds: 17,
      upstreamRequestId: "q",
      retryable: true,
    });
  });

  it("passes a 400's text through on submission", async () => {
    const message =
      "<400> InternalError.Algo.InvalidParameter: The size is not match the allowed size";
    vendor.answer({
      status: 400,
      body: { request_id: "b", code: "InvalidParameter", message },
    });
    const error = await failure(model.submit({ upstreamModel: "wan2.6-t2v", body: BODY }));
    expect(error).toMatchObject({
      kind: "http",
      status: 400,
      vendorCode: "InvalidParameter",
      message,
      upstreamRequestId: "b",
      retryable: false,
    });
  });

  it("answers a 2xx body that is not JSON, or has no task id, with a protocol error", async () => {
    vendor.answer(
      { body: "<html>gateway busy</html>" },
      { body: "<html>gateway busy</html>" },
      { body: { output: {}, request_id: "n" } },
    );
    expect(await failure(model.poll(POLL))).toMatchObject({ kind: "protocol", retryable: false });
    expect(await failure(model.submit({ upstreamModel: "wan2.6-t2v", body: BODY }))).toMatchObject({
      kind: "protocol",
    });
    const missing = await failure(model.submit({ upstreamModel: "wan2.6-t2v", body: BODY }));
    expect(missing).toMatchObject({ kind: "protocol", upstreamRequestId: "n" });
    expect(missing.message).toMatch(/task_id/);
  });

  it("reads a non-JSON error body as the error's text", async () => {
    vendor.answer({ status: 503, body: "upstream connect error" });
    expect(await failure(model.poll(POLL))).toMatchObject({
      kind: "http",
      status: 503,
      message: "upstream connect error",
      retryable: true,
    });
  });
});
