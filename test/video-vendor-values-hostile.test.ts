/**
 * A video vendor that reports fractional numbers (xAI's `video.duration` 4.5 seconds, `progress`
 * 12.5) or a NUL character in its failure message — plain JSON the adapters accept as it is. The
 * task must still finish and be billed (ceil(4.5) = 5 s), fail and be released, or show its
 * progress, on both databases: PostgreSQL's `integer` and `text` columns refuse a fraction and a
 * NUL, and a refused write left the task unfinished (nor billed, nor its video delivered) until
 * it expired.
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

describe("video task: vendor reports fractional seconds / progress", () => {
  let gateway: TestGateway;
  let vendor: Server;
  /** What the vendor answers to polls of each task, by request id. */
  const pollAnswers = new Map<string, unknown>();
  let next = 0;

  beforeAll(async () => {
    vendor = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on("data", (part: Buffer) => parts.push(part));
      request.on("end", () => {
        response.setHeader("content-type", "application/json");
        if (request.method === "POST" && request.url === "/videos/generations") {
          const id = `req_${++next}`;
          response.end(JSON.stringify({ request_id: id }));
          return;
        }
        const id = decodeURIComponent((request.url ?? "").split("/").pop() ?? "");
        response.end(JSON.stringify(pollAnswers.get(id) ?? { status: "pending" }));
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 },
        catalog: {
          models: [
            xaiVideoModel("rogue-video", url, {
              perSecond: PER_SECOND,
              durations: [1, 2, 3, 4, 5, 6],
              upstreamModel: "grok-imagine-video",
            }),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  async function follow(id: string, key: string, ms = 4000) {
    const deadline = Date.now() + ms;
    let task: Record<string, unknown> & { status: string; billing: { state: string } };
    for (;;) {
      task = (await (
        await gateway.request(`/v1/videos/generations/${id}`, { key })
      ).json()) as typeof task;
      if (task.billing.state === "settled" || task.billing.state === "released") return task;
      if (Date.now() > deadline) return task;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("finishes and bills a task whose vendor reports a duration of 4.5 s", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "rogue-video", prompt: "a cat", duration: 6, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; provider_task_id: string };
    pollAnswers.set(accepted.provider_task_id, {
      status: "done",
      video: { url: "https://cdn.example/v.mp4", duration: 4.5 },
    });
    const task = await follow(accepted.id, user.key);
    const charged = before - (await balanceOf(gateway, user.key));
    expect({
      status: task.status,
      billing: task.billing.state,
      video: (task.content as { video_url?: string } | null)?.video_url ?? null,
      charged,
    }).toEqual({
      status: "succeeded",
      billing: "settled",
      video: "https://cdn.example/v.mp4",
      charged: 5 * PER_SECOND,
    });
  });

  it("fails and releases a task whose vendor's failure message holds a NUL character", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "rogue-video", prompt: "a bird", duration: 3, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; provider_task_id: string };
    pollAnswers.set(accepted.provider_task_id, {
      status: "failed",
      error: "content\u0000filter",
    });
    const task = await follow(accepted.id, user.key);
    expect({
      status: task.status,
      billing: task.billing.state,
      balanceBack: (await balanceOf(gateway, user.key)) === before,
    }).toEqual({ status: "failed", billing: "released", balanceBack: true });
  });

  it("records the progress 12.5 a running task reports (the task shows as running)", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "rogue-video", prompt: "a dog", duration: 2, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; provider_task_id: string };
    pollAnswers.set(accepted.provider_task_id, { status: "pending", progress: 12.5 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const task = (await (
      await gateway.request(`/v1/videos/generations/${accepted.id}`, { key: user.key })
    ).json()) as { status: string; progress: number | null };
    expect({ status: task.status, progress: task.progress }).toEqual({
      status: "running",
      progress: expect.any(Number),
    });
  });
});
