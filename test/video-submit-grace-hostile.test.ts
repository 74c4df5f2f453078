/**
 * A video submission the vendor is slow to acknowledge. The task row is created (with its hold)
 * before the vendor call and taken for an interrupted submission (`SubmissionInterrupted`, hold
 * released) when no vendor task id comes within `tasks.submit_grace_seconds`. A submission still
 * under way must not be taken for one: otherwise the vendor generates (and bills the operator
 * for) a video that is never followed, delivered or charged.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { xaiVideoModel } from "./support/vendor-models.ts";

const PER_SECOND = 50_000;

describe("video submission slower than tasks.submit_grace_seconds", () => {
  let gateway: TestGateway;
  let vendor: Server;

  beforeAll(async () => {
    vendor = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.setHeader("content-type", "application/json");
        if (request.method === "POST") {
          // The vendor takes 2.5 s to acknowledge the submission.
          setTimeout(() => response.end(JSON.stringify({ request_id: "req_slow" })), 2500);
          return;
        }
        response.end(
          JSON.stringify({
            status: "done",
            video: { url: "https://cdn.example/v.mp4", duration: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        tasks: {
          tick_ms: 20,
          poll_min_interval_ms: 20,
          poll_max_interval_ms: 100,
          submit_grace_seconds: 1,
        },
        catalog: {
          models: [xaiVideoModel("slow-video", url, { perSecond: PER_SECOND })],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  it("does not fail (and release) a task whose submission the vendor then accepts", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "slow-video", prompt: "a cat", duration: 2, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; provider_task_id: string | null };
    expect(accepted.provider_task_id).toBe("req_slow");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const task = (await (
      await gateway.request(`/v1/videos/generations/${accepted.id}`, { key: user.key })
    ).json()) as { status: string; billing: { state: string }; error: unknown };
    const charged = before - (await balanceOf(gateway, user.key));
    // The vendor accepted it and made the video: it is followed to its end and billed.
    expect({ status: task.status, billing: task.billing.state, charged }).toEqual({
      status: "succeeded",
      billing: "settled",
      charged: 2 * PER_SECOND,
    });
  });
});

describe("a vendor acknowledgment of a video task already given up", () => {
  // The submitter lost the race: the task was taken for an interrupted submission (its hold
  // released) before the vendor answered, for instance while the submitter's database link was
  // down for longer than the grace. The vendor's answer then means a video is being made that
  // nobody follows, delivers or bills. A vendor that can cancel is asked to.
  let gateway: TestGateway;
  let vendor: Server;
  let acknowledge: () => void = () => {};
  let submitted: () => void = () => {};
  const paths: string[] = [];

  beforeAll(async () => {
    vendor = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        paths.push(`${request.method} ${request.url}`);
        response.setHeader("content-type", "application/json");
        if (request.url?.endsWith("/video-synthesis")) {
          acknowledge = () =>
            response.end(
              JSON.stringify({
                request_id: "r-1",
                output: { task_id: "t-late", task_status: "PENDING" },
              }),
            );
          submitted();
          return;
        }
        response.end(
          JSON.stringify({
            request_id: "r-2",
            output: {
              task_id: "t-late",
              task_status: request.method === "POST" ? "CANCELED" : "PENDING",
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 },
        catalog: {
          models: [
            {
              id: "late-video",
              endpoint: "video",
              family: "motion",
              display_name: "Video on a vendor that answers late",
              owned_by: "self-hosted",
              capabilities: {
                resolutions: ["720p"],
                durations: [2, 3],
                aspect_ratios: ["16:9"],
                video_protocol: "2.6",
                video_input: "t2v",
              },
              pricing: { per_video_second: { "720p": PER_SECOND } },
              routes: [
                {
                  vendor: "late",
                  adapter: "dashscope",
                  base_url: `${url}/api/v1`,
                  upstream_model: "wan2.6-t2v",
                },
              ],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    acknowledge();
    await gateway?.close();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  it("asks the vendor to cancel it", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const reachedVendor = new Promise<void>((resolve) => {
      submitted = resolve;
    });
    const answer = gateway.request("/v1/videos/generations", {
      key: user.key,
      json: {
        model: "late-video",
        input: { prompt: "a cat" },
        parameters: { size: "1280*720", duration: 2 },
      },
    });
    await reachedVendor;
    // Given up meanwhile, as the engine does with a submission that showed no sign of life.
    const listed = (await (
      await gateway.request("/v1/videos/generations", { key: user.key })
    ).json()) as { data: Array<{ id: string }> };
    const task = await gateway.services.store.findVideoTaskById(listed.data[0]!.id);
    expect(task).toBeDefined();
    await gateway.services.videoTasks.finish(task!, "failed", {
      code: "SubmissionInterrupted",
      message: "The submission to the vendor was interrupted.",
    });
    acknowledge();
    await (await answer).text();
    const deadline = Date.now() + 3_000;
    while (!paths.includes("POST /api/v1/tasks/t-late/cancel") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(paths).toContain("POST /api/v1/tasks/t-late/cancel");
    expect(before - (await balanceOf(gateway, user.key))).toBe(0);
  });
});
