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
          models: [
            {
              id: "slow-video",
              endpoint: "video",
              family: "gen-video",
              display_name: "Video on a vendor slow to acknowledge",
              owned_by: "self-hosted",
              capabilities: {
                resolutions: ["480p"],
                durations: [1, 2, 3],
                aspect_ratios: ["16:9"],
                video_input: "t2v+i2v",
              },
              pricing: { per_video_second: { "480p": PER_SECOND } },
              routes: [
                { vendor: "slow", adapter: "xai-video", base_url: url, upstream_model: "g" },
              ],
            },
          ],
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
